// What the benchmark's client adds to a page's time: the same page of the big-log benchmark's
// cached 10 M store timed through `adminGet` (fetch, the body decoded into a string), through
// node:http on a kept-alive connection with the body's bytes counted (what `adminGetBytes` was
// until d51d1db), and through `adminGetBytes` (one read buffer, nothing kept), 200 requests one at
// a time each, after WARMUP, in alternating rounds on one server, all in this one process (each
// client's garbage is collected while the others run too).
//   STORE=sqlite|postgres [PAGE=limit=500 | PAGE=/api/admin/agents?limit=500] node scripts/page-client-cost.mjs
import console from 'node:console';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { getBytes, percentile, startSignalgate } from '../dist/bench/bench-server.js';
import { seededBigLog } from '../dist/bench/big-log.js';
import { loadAverage } from '../dist/bench/load-average.js';

const N = Number(process.env.BENCH_BIG_LOG_SIGNALS ?? 10_000_000);
const STORE = process.env.STORE ?? 'sqlite';
// A query of the log, or a whole path from '/'.
const PAGE = process.env.PAGE?.startsWith('/') ? process.env.PAGE : `/api/admin/signals?${process.env.PAGE ?? 'limit=500'}`;
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WARMUP = Number(process.env.WARMUP ?? 5);
const { env, dataDir } = seededBigLog(STORE === 'sqlite' ? 'sqlite' : 'postgres', N);
const server = await startSignalgate(env, {}, dataDir === undefined ? {} : { dataDir });
const keptAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
const clients = [
  ['fetch, decoded', (p) => server.adminGet(p)],
  // node:http, every chunk a Buffer of its own, its bytes counted.
  ['node:http, counted', (p) => getBytes(server.url + p, server.adminToken, keptAlive)],
  ['one read buffer, counted', (p) => server.adminGetBytes(p)],
];
try {
  console.log(`${PAGE} on ${STORE}, ${N.toLocaleString('en')} signals; load average ${loadAverage()}`);
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, get] of round % 2 === 1 ? clients : [...clients].reverse()) {
      for (let k = 0; k < WARMUP; k++) await get(PAGE);
      const times = [];
      for (let k = 0; k < 200; k++) {
        const started = performance.now();
        await get(PAGE);
        times.push(performance.now() - started);
      }
      times.sort((a, b) => a - b);
      const ms = (q) => percentile(times, q / 100).toFixed(1);
      console.log(`round ${round}, ${name}: p50 ${ms(50)} ms, p99 ${ms(99)} ms, max ${times[times.length - 1].toFixed(1)} ms`);
    }
  }
} finally {
  keptAlive.destroy();
  await server.stop();
}
