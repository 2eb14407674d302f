// Where the slow requests of the big-log benchmark's pages spend their time: the benchmark's own
// sequence on the cached PostgreSQL store (both servers, ROUNDS ingest rounds of SECONDS s, then
// every page REQUESTS times, one at a time), each request over the threshold split into the
// server's own time (its access line's `ms`, from the router to the answer), the server's garbage
// collections inside it (scripts/soak-probe.mjs) and this client's. Needs the built dist/ and the
// seeded cache (`BENCH_BIG_LOG_SEED_ONLY=1 npm run bench -- --big-log`):
//   BENCH_BIG_LOG_SIGNALS=10000000 node scripts/big-log-page-tails.mjs [threshold ms, default 10]
import { randomBytes } from 'node:crypto';
import console from 'node:console';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { createPostgresSchema, startSignalgate } from '../dist/bench/bench-server.js';
import { adminPages, seededBigLog } from '../dist/bench/big-log.js';
import { loadAverage } from '../dist/bench/load-average.js';
import { runLoad } from '../dist/bench/load.js';
import { signalMix } from '../dist/bench/signal-mix.js';

const threshold = Number(process.argv[2] ?? 10);
const N = Number(process.env.BENCH_BIG_LOG_SIGNALS ?? 10_000_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SECONDS = Number(process.env.SECONDS ?? 5);
const REQUESTS = Number(process.env.REQUESTS ?? 200);
const here = path.dirname(fileURLToPath(import.meta.url));
const work = mkdtempSync(path.join(tmpdir(), 'signalgate-page-tails-'));
const probeFile = path.join(work, 'probe.jsonl');
const clientGc = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) clientGc.push({ from: performance.timeOrigin + e.startTime, ms: e.duration });
}).observe({ entryTypes: ['gc'] });

// The seeded cache's server settings (retention on); the empty store's server takes the same but its database.
const { env } = seededBigLog('postgres', N);
const probed = { NODE_OPTIONS: `--import ${path.join(here, 'soak-probe.mjs')}`, SOAK_PROBE_FILE: probeFile };
const dataDir = path.join(work, 'big');
mkdirSync(dataDir);
const big = await startSignalgate({ ...env, ...probed }, {}, { dataDir });
const emptySchema = await createPostgresSchema();
const empty = await startSignalgate({ ...env, SIGNALGATE_DATABASE_URL: emptySchema.url }, {});
const requests = [];
try {
  const mix = async (server) => {
    const account = await server.admin('/api/admin/accounts', { name: 'bench', monthlySignalQuota: 1_000_000_000 });
    const plain = await server.admin('/api/admin/sources', { accountId: account.id, name: 'plain' });
    const secret = randomBytes(16).toString('hex');
    const signed = await server.admin('/api/admin/sources', { accountId: account.id, name: 'signed', hmacSecret: secret });
    return signalMix(plain.authKey, signed.authKey, secret);
  };
  const [bigMix, emptyMix] = [await mix(big), await mix(empty)];
  for (let round = 1; round <= ROUNDS; round++) {
    const pair = [[empty, emptyMix], [big, bigMix]];
    for (const [server, m] of round % 2 ? pair : pair.reverse()) await runLoad(server.url, m, 50, SECONDS);
  }
  console.log(`pages from load ${loadAverage()}`);
  for (const [page, urls] of adminPages()) {
    for (const u of urls.slice(0, 5)) await big.adminGet(u);
    for (let k = 0; k < REQUESTS; k++) {
      const at = performance.timeOrigin + performance.now();
      const started = performance.now();
      await big.adminGetBytes(urls[k % urls.length]);
      requests.push({ page, at, ms: performance.now() - started, path: urls[k % urls.length].split('?')[0] });
    }
  }
  console.log(`pages to load ${loadAverage()}`);
} finally {
  await big.stop();
  await empty.stop();
  await emptySchema.drop();
}
// The server's access lines of the pages, in order, matched to the requests by path and time.
const access = readFileSync(path.join(dataDir, 'server.log'), 'utf8').split('\n').filter((l) => l.includes('"method":"GET"')).map((l) => JSON.parse(l));
let j = 0;
for (const r of requests) {
  while (j < access.length && !(access[j].url === r.path && Math.abs(Date.parse(access[j].time) - r.at) < 3000)) j++;
  r.server = access[j++]?.ms ?? NaN;
}
const serverGc = readFileSync(probeFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l)).filter((e) => e.kind === 'gc');
const overlap = (r, events) => events.reduce((sum, e) => sum + Math.max(0, Math.min(r.at + r.ms, e.from + e.ms) - Math.max(r.at, e.from)), 0);
const slow = requests.filter((r) => r.ms > threshold);
const sum = (f) => slow.reduce((s, r) => s + f(r), 0);
const total = sum((r) => r.ms);
const part = (ms) => `${ms.toFixed(0)} ms (${((100 * ms) / Math.max(1, total)).toFixed(0)} %)`;
console.log(`${requests.length} page requests, ${slow.length} over ${threshold} ms, ${total.toFixed(0)} ms in all; of that:`);
console.log(`  inside the server's handling: ${part(sum((r) => r.server))}, of which its garbage collections ${part(sum((r) => overlap(r, serverGc)))}`);
console.log(`  outside it (the client, the network, waiting for a core): ${part(sum((r) => r.ms - r.server))}, of which the client's collections ${part(sum((r) => overlap(r, clientGc)))}`);
const pages = new Map();
for (const r of slow) pages.set(r.page, (pages.get(r.page) ?? 0) + 1);
console.log(`slow requests per page: ${[...pages].sort((a, b) => b[1] - a[1]).map(([p, n]) => `${p} ${n}`).join('; ')}`);
rmSync(work, { recursive: true, force: true });
