// The server CPU and the latency of one page of the signal log (default `limit=500`, the
// big-log benchmark's "log, 500 per page") on the big-log benchmark's cached store, for one or
// more builds in alternating rounds: each round starts each build's server in turn on the same
// store (the order flips every round), warms it up, then times REQUESTS requests one at a time
// and reads the server's CPU from /proc around them. Every build's answer must be the same bytes.
// Needs each build's dist/ and the seeded cache (`BENCH_BIG_LOG_SEED_ONLY=1 npm run bench -- --big-log`):
//   BENCH_BIG_LOG_SIGNALS=1000000 STORE=sqlite|postgres node scripts/signal-page-cpu.mjs /work/main .
// ROUNDS (6), REQUESTS (200), WARMUP (30), PAGE (`limit=500`, or another page's whole path); PROFILE=DIR runs each server
// under `--cpu-prof` and leaves its profiles in DIR.
import { createHash } from 'node:crypto';
import console from 'node:console';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { median, percentile, startSignalgate } from '../dist/bench/bench-server.js';
import { seededBigLog } from '../dist/bench/big-log.js';
import { loadAverage } from '../dist/bench/load-average.js';
import { cpuMillis } from '../dist/bench/process-cpu.js';

const builds = process.argv.slice(2).map((dir) => path.resolve(dir));
if (builds.length === 0) throw new Error('name one or more builds (checkouts with dist/ built): node scripts/signal-page-cpu.mjs /work/main .');
const N = Number(process.env.BENCH_BIG_LOG_SIGNALS ?? 10_000_000);
const STORE = process.env.STORE ?? 'sqlite';
const ROUNDS = Number(process.env.ROUNDS ?? 6);
const REQUESTS = Number(process.env.REQUESTS ?? 200);
const WARMUP = Number(process.env.WARMUP ?? 30);
// A query of the log, or a whole path from '/' (e.g. PAGE=/api/admin/agents?limit=500).
const PAGE = process.env.PAGE?.startsWith('/') ? process.env.PAGE : `/api/admin/signals?${process.env.PAGE ?? 'limit=500'}`;
const PROFILE = process.env.PROFILE;
// The benchmark's cached store; fails here when it is not seeded.
const { env, dataDir } = seededBigLog(STORE === 'sqlite' ? 'sqlite' : 'postgres', N);

const results = new Map(builds.map((build) => [build, { cpuUs: [], p50: [], p99: [] }]));
const bodies = new Map();
console.log(`${PAGE} on ${STORE}, ${N.toLocaleString('en')} signals; ${ROUNDS} rounds × ${REQUESTS} requests, one at a time`);
for (let round = 1; round <= ROUNDS; round++) {
  for (const build of round % 2 === 1 ? builds : [...builds].reverse()) {
    const placement = PROFILE === undefined ? {} : { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] };
    const server = await startSignalgate(env, placement, { build, ...(dataDir && { dataDir }) });
    try {
      for (let k = 0; k < WARMUP; k++) await server.adminGet(PAGE);
      const body = createHash('sha256').update(await server.adminGet(PAGE)).digest('hex');
      if (!bodies.has(build)) bodies.set(build, body);
      const before = cpuMillis(server.pid);
      const times = [];
      for (let k = 0; k < REQUESTS; k++) {
        const started = performance.now();
        await server.adminGetBytes(PAGE);
        times.push(performance.now() - started);
      }
      const cpuUs = ((cpuMillis(server.pid) - before) * 1000) / REQUESTS;
      times.sort((a, b) => a - b);
      const r = results.get(build);
      r.cpuUs.push(cpuUs);
      r.p50.push(percentile(times, 0.5));
      r.p99.push(percentile(times, 0.99));
      console.log(
        `round ${round} ${build}: server CPU ${cpuUs.toFixed(0)} µs / request, p50 ${r.p50.at(-1).toFixed(2)} ms, p99 ${r.p99.at(-1).toFixed(2)} ms (load ${loadAverage()})`,
      );
    } finally {
      await server.stop();
    }
  }
}
for (const [build, r] of results) {
  console.log(`${build}: medians of ${ROUNDS} rounds: server CPU ${median(r.cpuUs).toFixed(0)} µs / request, p50 ${median(r.p50).toFixed(2)} ms, p99 ${median(r.p99).toFixed(2)} ms`);
}
// The change is only a change of how the bytes are made: every build must answer the same ones.
if (new Set(bodies.values()).size > 1) throw new Error(`the builds answered different bodies: ${[...bodies].map(([b, h]) => `${b} ${h}`).join(', ')}`);
console.log(`every build answered the same body (sha256 ${[...bodies.values()][0]})`);
