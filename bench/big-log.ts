import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { accountCount, accountId, agentId, signalId, sourceId } from './big-log-shape.js';
import { seedPostgres } from './big-log-seed-postgres.js';
import { seedSqlite } from './big-log-seed-sqlite.js';
import { loadAverage } from './load-average.js';
import {
  BENCH_PG_URL,
  createPostgresSchema,
  median,
  percentile,
  redact,
  startSignalgate,
  type BenchServer,
} from './bench-server.js';
import { runLoad, type LoadResult } from './load.js';
import { backendMillis, PostgresBackends } from './postgres-backends.js';
import { cpuMillis } from './process-cpu.js';
import { signalMix, type BenchRequest } from './signal-mix.js';

/**
 * `npm run bench -- --big-log`: signalgate on a store holding millions of signals
 * (`BENCH_BIG_LOG_SIGNALS`, default 10,000,000, shaped as big-log-shape.ts says), retention on
 * (90 d), per store: ingest against an empty store in alternating rounds, every admin list and
 * filter page the API and dashboard offer (p50/p99 over `BENCH_BIG_LOG_REQUESTS` requests each,
 * one at a time), and both servers' resident memory at start, after the ingest rounds and after
 * the pages; `BENCH_BIG_LOG_STORES`
 * (default `sqlite,postgres`) picks the stores. Seeding 10 M signals takes
 * minutes, so the seeded store is kept between runs (`BENCH_BIG_LOG_SEED_ONLY=1` seeds the
 * missing ones and measures nothing), keyed by the count and the schema's last
 * migration: SQLite under `BENCH_BIG_LOG_DIR` (default `<tmpdir>/signalgate-bench-big-log`),
 * PostgreSQL as the schema `bench_big_log_<n>_m<migration>` of the benchmark's database.
 */
const here = path.dirname(fileURLToPath(import.meta.url));
const N = Number(process.env.BENCH_BIG_LOG_SIGNALS ?? 10_000_000);
const REQUESTS = Number(process.env.BENCH_BIG_LOG_REQUESTS ?? 200);
const CACHE = process.env.BENCH_BIG_LOG_DIR ?? path.join(tmpdir(), 'signalgate-bench-big-log');
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const RETENTION = { SIGNALGATE_RETENTION: '90d' };
const STORES = (process.env.BENCH_BIG_LOG_STORES ?? 'sqlite,postgres').split(',');
const SEED_ONLY = process.env.BENCH_BIG_LOG_SEED_ONLY === '1';

export interface BigLogRow {
  store: string;
  page: string;
  p50: number;
  p99: number;
  max: number;
}
export interface BigLogIngest {
  store: string;
  big: number;
  empty: number;
  bigP99: number;
  emptyP99: number;
  /** Medians per round of the CPU per request: the server's, and on PostgreSQL its backends'. */
  cpuUs: { empty: number; big: number; emptyBackends?: number; bigBackends?: number };
}

export async function runBigLog(): Promise<{ pages: BigLogRow[]; ingest: BigLogIngest[] }> {
  if (!Number.isInteger(N) || N < 1000)
    throw new Error(
      `BENCH_BIG_LOG_SIGNALS must be a whole number of at least 1000, got '${process.env.BENCH_BIG_LOG_SIGNALS}'`,
    );
  const pages: BigLogRow[] = [];
  const ingest: BigLogIngest[] = [];
  const memory: string[] = [];
  for (const store of (['SQLite', 'PostgreSQL'] as const).filter((name) =>
    STORES.includes(name === 'SQLite' ? 'sqlite' : 'postgres'),
  )) {
    const big = store === 'SQLite' ? await sqliteCache() : await postgresCache();
    if (big === null) {
      process.stdout.write(`PostgreSQL at ${redact(BENCH_PG_URL)} not reachable: no PostgreSQL rows\n`);
      continue;
    }
    if (SEED_ONLY) continue;
    const emptySchema = store === 'PostgreSQL' ? await createPostgresSchema() : null;
    const servers: BenchServer[] = [];
    const backends = new Map<'big' | 'empty', PostgresBackends>();
    try {
      const bigServer = await startSignalgate({ ...RETENTION, ...big.env }, {}, { dataDir: big.dataDir });
      servers.push(bigServer);
      const emptyServer = await startSignalgate(
        { ...RETENTION, ...(emptySchema ? { SIGNALGATE_DATABASE_URL: emptySchema.url } : {}) },
        {},
      );
      servers.push(emptyServer);
      // On PostgreSQL, the backends serving each server, read per round beside the server's own CPU.
      if (store === 'PostgreSQL')
        for (const [name, server] of [
          ['big', bigServer],
          ['empty', emptyServer],
        ] as const)
          backends.set(name, new PostgresBackends(server.pid));
      // Both servers' memory, so the ingest rounds' load (the same on both) and the store's size
      // (the big one's alone) can be told apart.
      const rssStart = [rss(bigServer.pid), rss(emptyServer.pid)];
      const bigMix = await ingestMix(bigServer);
      const emptyMix = await ingestMix(emptyServer);
      const runs = { big: [] as LoadResult[], empty: [] as LoadResult[] };
      const cpu = {
        big: [] as number[],
        empty: [] as number[],
        bigBackends: [] as number[],
        emptyBackends: [] as number[],
      };
      await runLoad(bigServer.url, bigMix, CONNECTIONS, 2);
      await runLoad(emptyServer.url, emptyMix, CONNECTIONS, 2);
      for (let round = 1; round <= ROUNDS; round++) {
        // Which store goes first alternates: the second of a pair runs after the first's writes
        // (its checkpoint, autovacuum), so a fixed order would lean one way.
        const pair = [
          ['empty', emptyServer, emptyMix],
          ['big', bigServer, bigMix],
        ] as const;
        for (const [name, server, mix] of round % 2 === 1 ? pair : [...pair].reverse()) {
          const serverBefore = cpuMillis(server.pid);
          const database = backends.get(name);
          const backendsBefore = await database?.cpu();
          const result = await runLoad(server.url, mix, CONNECTIONS, SECONDS);
          if (result.non2xx > 0 || result.errors > 0)
            throw new Error(
              `${store} ${name}: ${result.non2xx} non-2xx answers and ${result.errors} errors; the run is not valid`,
            );
          runs[name].push(result);
          const serverUs = ((cpuMillis(server.pid) - serverBefore) * 1000) / result.total;
          cpu[name].push(serverUs);
          let backendsPart = '';
          if (database !== undefined && backendsBefore !== undefined) {
            const backendsUs = (backendMillis(backendsBefore, await database.cpu()) * 1000) / result.total;
            cpu[`${name}Backends`].push(backendsUs);
            backendsPart = `, backends ${backendsUs.toFixed(0)} µs`;
          }
          process.stdout.write(
            `round ${round} ${store} ${name} store: ${result.requestsPerSecond.toFixed(0)} req/s, p99 ${result.p99} ms; CPU per request: server ${serverUs.toFixed(0)} µs${backendsPart} (load ${loadAverage()})\n`,
          );
        }
      }
      ingest.push({
        store,
        big: median(runs.big.map((r) => r.requestsPerSecond)),
        empty: median(runs.empty.map((r) => r.requestsPerSecond)),
        bigP99: median(runs.big.map((r) => r.p99)),
        emptyP99: median(runs.empty.map((r) => r.p99)),
        cpuUs: {
          empty: median(cpu.empty),
          big: median(cpu.big),
          ...(cpu.bigBackends.length > 0 && {
            emptyBackends: median(cpu.emptyBackends),
            bigBackends: median(cpu.bigBackends),
          }),
        },
      });
      const rssIngest = [rss(bigServer.pid), rss(emptyServer.pid)];
      for (const [page, urls] of adminPages()) {
        const times = await timeRequests(bigServer, urls);
        const row = { store, page, p50: percentile(times, 0.5), p99: percentile(times, 0.99), max: times.at(-1)! };
        pages.push(row);
        process.stdout.write(`${store} ${page}: p50 ${row.p50.toFixed(2)} ms, p99 ${row.p99.toFixed(2)} ms\n`);
      }
      const rssPages = [rss(bigServer.pid), rss(emptyServer.pid)];
      for (const [k, name] of ['big', 'empty (idle during the pages)'].entries()) {
        memory.push(`| ${store} | ${name} | ${mb(rssStart[k]!)} | ${mb(rssIngest[k]!)} | ${mb(rssPages[k]!)} |`);
      }
    } finally {
      for (const database of backends.values()) await database.close();
      for (const server of servers) await server.stop();
      await emptySchema?.drop(); // also when a server failed to start
    }
  }
  if (!SEED_ONLY) report(pages, ingest, memory);
  return { pages, ingest };
}

/** The requests each page is measured with (several where a page varies, e.g. a signal by id). */
export function adminPages(): [string, string[]][] {
  const accounts = accountCount(N);
  const mid = signalId(Math.floor(N / 2));
  const typical = Math.floor(accounts / 2);
  const source = sourceId(typical, 0);
  const busy = sourceId(0, 1);
  const signals = (query: string) => [`/api/admin/signals${query ? `?${query}` : ''}`];
  const byId = Array.from(
    { length: 50 },
    (_, k) => `/api/admin/signals/${signalId(Math.floor(((k * 7919) % 1000) * (N / 1000)))}`,
  );
  return [
    ['log, first page', signals('')],
    ['log, deep page (before = the middle)', signals(`before=${mid}`)],
    ['log, 500 per page', signals('limit=500')],
    ['source (a typical one)', signals(`sourceId=${source}`)],
    ['source (the busiest)', signals(`sourceId=${busy}`)],
    ['source, deep page', signals(`sourceId=${source}&before=${mid}`)],
    ['status=accepted', signals('status=accepted')],
    ['status=rejected', signals('status=rejected')],
    ['status=duplicate', signals('status=duplicate')],
    ['status=rejected, deep page', signals(`status=rejected&before=${mid}`)],
    ['outcome=executed', signals('outcome=executed')],
    ['outcome=failed', signals('outcome=failed')],
    ['outcome=expired', signals('outcome=expired')],
    ['outcome=queued', signals('outcome=queued')],
    ['outcome=failed, deep page', signals(`outcome=failed&before=${mid}`)],
    ['symbol=EURUSD', signals('symbol=EURUSD')],
    ['symbol=EURJPY (the rarest)', signals('symbol=EURJPY')],
    ['symbol=EURJPY, deep page', signals(`symbol=EURJPY&before=${mid}`)],
    ['source + status=rejected', signals(`sourceId=${source}&status=rejected`)],
    ['source + status=duplicate', signals(`sourceId=${source}&status=duplicate`)],
    ['source + symbol=EURJPY', signals(`sourceId=${source}&symbol=EURJPY`)],
    ['source + outcome=failed', signals(`sourceId=${source}&outcome=failed`)],
    ['status=rejected + symbol=XAUUSD', signals('status=rejected&symbol=XAUUSD')],
    ['outcome=executed + symbol=EURJPY', signals('outcome=executed&symbol=EURJPY')],
    [
      "source + status + symbol, limit=1 (the dashboard's filter check)",
      signals(`sourceId=${source}&status=accepted&symbol=XAUUSD&limit=1`),
    ],
    ['a signal by id', byId],
    ['accounts', ['/api/admin/accounts?limit=20']],
    ['accounts, deep page', [`/api/admin/accounts?limit=20&before=${accountId(typical)}`]],
    ["accounts, 100 per page (the dashboard's pick lists)", ['/api/admin/accounts?limit=100']],
    ['accounts, 500 per page', ['/api/admin/accounts?limit=500']],
    ['sources', ['/api/admin/sources?limit=20']],
    ['sources of an account', [`/api/admin/sources?limit=20&accountId=${accountId(typical)}`]],
    ["sources, 100 per page (the dashboard's pick lists)", ['/api/admin/sources?limit=100']],
    ['sources, 500 per page', ['/api/admin/sources?limit=500']],
    ['agents', ['/api/admin/agents?limit=20']],
    ['agents, 500 per page (each with its published state)', ['/api/admin/agents?limit=500']],
    ['agents of an account', [`/api/admin/agents?limit=20&accountId=${accountId(typical)}`]],
    ['an agent', [`/api/admin/agents/${agentId(typical, 0)}`]],
    ['usage this month (the biggest account)', [`/api/admin/accounts/${accountId(0)}/usage`]],
    ['usage per day, 30 d (a typical account)', [`/api/admin/accounts/${accountId(typical)}/usage/daily?days=30`]],
    ['usage per day, 30 d (the biggest account)', [`/api/admin/accounts/${accountId(0)}/usage/daily?days=30`]],
    ['usage per day, 90 d (the biggest account)', [`/api/admin/accounts/${accountId(0)}/usage/daily?days=90`]],
  ];
}

/** Milliseconds per request, ascending; one request at a time, each answer read to its last byte. */
async function timeRequests(server: BenchServer, urls: string[]): Promise<number[]> {
  for (const url of urls.slice(0, 5)) await server.adminGet(url); // warm-up, and a refused page fails the run
  const times: number[] = [];
  for (let k = 0; k < REQUESTS; k++) {
    const started = performance.now();
    await server.adminGetBytes(urls[k % urls.length]!);
    times.push(performance.now() - started);
  }
  return times.sort((a, b) => a - b);
}

async function ingestMix(server: BenchServer): Promise<BenchRequest[]> {
  const account = await server.admin('/api/admin/accounts', { name: 'bench', monthlySignalQuota: 1_000_000_000 });
  const plain = await server.admin('/api/admin/sources', { accountId: account.id, name: 'plain' });
  const secret = randomBytes(16).toString('hex');
  const signed = await server.admin('/api/admin/sources', {
    accountId: account.id,
    name: 'signed',
    hmacSecret: secret,
  });
  return signalMix(plain.authKey, signed.authKey, secret);
}

/** The last migration's number: a cached store seeded under an older schema is not reused. */
function lastMigration(dialect: 'sqlite' | 'postgres'): number {
  const dir = path.join(here, '..', 'migrations', dialect);
  return Math.max(
    ...readdirSync(dir)
      .map((name) => /^(\d+)_/.exec(name)?.[1])
      .filter((v) => v !== undefined)
      .map(Number),
  );
}

/** The seeders' revision: a cache seeded by an earlier one (agents without a state, before 2) is not reused. */
const SEED_REVISION = 2;

/** The data directory of the cached SQLite store of `n` signals (scripts reach it through `seededBigLog`). */
function bigLogSqliteDir(n = N): string {
  return path.join(CACHE, `sqlite-n${n}-m${lastMigration('sqlite')}-s${SEED_REVISION}`);
}

/** The schema of the cached PostgreSQL store of `n` signals. */
function bigLogSchema(n = N): string {
  return `bench_big_log_${n}_m${lastMigration('postgres')}_s${SEED_REVISION}`;
}

/**
 * What a server needs to serve the seeded cache of `n` signals, retention on as in the benchmark:
 * SQLite's cached data directory (failing here, not in a server, when it is not seeded), or
 * PostgreSQL's cached schema (each server then gets a data directory of its own for its log).
 * For the scripts that work on the cache; the benchmark seeds what is missing instead.
 */
export function seededBigLog(store: 'sqlite' | 'postgres', n = N): { env: Record<string, string>; dataDir?: string } {
  if (store === 'sqlite') {
    const dataDir = bigLogSqliteDir(n);
    readFileSync(path.join(dataDir, 'seeded'));
    return { env: { ...RETENTION }, dataDir };
  }
  return { env: { ...RETENTION, SIGNALGATE_DATABASE_URL: bigLogDatabaseUrl(n) } };
}

/** The benchmark's database with the cached schema of `n` signals as the search path. */
function bigLogDatabaseUrl(n = N): string {
  const url = new URL(BENCH_PG_URL);
  url.searchParams.set('options', `-c search_path=${bigLogSchema(n)}`);
  return url.toString();
}

/** The cached SQLite store, seeded first when missing (older caches of the same size are removed). */
async function sqliteCache(): Promise<{ dataDir: string; env: Record<string, string> }> {
  const dataDir = bigLogSqliteDir();
  if (existsSync(path.join(dataDir, 'seeded'))) {
    process.stdout.write(`SQLite: reusing ${dataDir} (${readFileSync(path.join(dataDir, 'seeded'), 'utf8').trim()})\n`);
    return { dataDir, env: {} };
  }
  mkdirSync(CACHE, { recursive: true });
  for (const stale of readdirSync(CACHE).filter((entry) => entry.startsWith(`sqlite-n${N}-`))) {
    process.stdout.write(`SQLite: removing ${path.join(CACHE, stale)} (not seeded, or an older schema)\n`);
    rmSync(path.join(CACHE, stale), { recursive: true, force: true });
  }
  mkdirSync(dataDir, { recursive: true });
  await (await startSignalgate({}, {}, { dataDir })).stop(); // the server migrates the new store as it starts
  const end = Date.now() - 60_000;
  const started = Date.now();
  seedSqlite(path.join(dataDir, 'signalgate.db'), N, end, (done) => progress('SQLite', done, started));
  writeFileSync(
    path.join(dataDir, 'seeded'),
    `${N} signals seeded ${new Date(end).toISOString()} in ${((Date.now() - started) / 1000).toFixed(0)} s\n`,
  );
  return { dataDir, env: {} };
}

/** The cached PostgreSQL schema, seeded first when missing; null when PostgreSQL is not reachable. */
async function postgresCache(): Promise<{ dataDir?: string; env: Record<string, string> } | null> {
  const schema = bigLogSchema();
  const env = { SIGNALGATE_DATABASE_URL: bigLogDatabaseUrl() };
  const client = new pg.Client({ connectionString: BENCH_PG_URL });
  try {
    await client.connect();
  } catch {
    return null;
  }
  try {
    const { rows } = await client.query<{ nspname: string; note: string | null }>(
      "SELECT nspname, obj_description(oid, 'pg_namespace') AS note FROM pg_namespace WHERE nspname LIKE $1",
      [`bench_big_log_${N}_m%`],
    );
    const cached = rows.find((row) => row.nspname === schema && row.note?.startsWith('seeded'));
    if (cached) {
      process.stdout.write(`PostgreSQL: reusing schema ${schema} (${cached.note})\n`);
      return { env };
    }
    for (const stale of rows) {
      process.stdout.write(`PostgreSQL: dropping schema ${stale.nspname} (not seeded, or an older schema)\n`);
      await client.query(`DROP SCHEMA ${stale.nspname} CASCADE`);
    }
    await client.query(`CREATE SCHEMA ${schema}`);
  } finally {
    await client.end();
  }
  await (await startSignalgate(env, {})).stop(); // the server migrates the new schema as it starts
  const end = Date.now() - 60_000;
  const started = Date.now();
  await seedPostgres(env.SIGNALGATE_DATABASE_URL, N, end, (done) => progress('PostgreSQL', done, started));
  const note = `seeded ${N} signals ${new Date(end).toISOString()} in ${((Date.now() - started) / 1000).toFixed(0)} s; drop with: DROP SCHEMA ${schema} CASCADE`;
  const done = new pg.Client({ connectionString: BENCH_PG_URL });
  await done.connect();
  await done.query(`COMMENT ON SCHEMA ${schema} IS '${note}'`);
  await done.end();
  return { env };
}

function progress(store: string, done: number, started: number): void {
  process.stdout.write(
    `${store}: seeded ${done.toLocaleString('en')} of ${N.toLocaleString('en')} signals (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
  );
}

/** Resident memory of a process, in bytes (Linux). */
function rss(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith('VmRSS:'));
  return Number(/(\d+)/.exec(line ?? '')?.[1] ?? NaN) * 1024;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(0)} MB`;
}

function report(pages: BigLogRow[], ingest: BigLogIngest[], memory: string[]): void {
  let out = `\nbig log: ${N.toLocaleString('en')} signals seeded, retention 90d, node ${process.version}\n`;
  out += `ingest: medians of ${ROUNDS} alternating rounds × ${SECONDS} s, ${CONNECTIONS} connections\n`;
  out +=
    "| store | empty store req/s | big store req/s | big vs empty | p99 empty ms | p99 big ms | server CPU µs / request, empty / big | backends' CPU µs / request, empty / big |\n|---|---|---|---|---|---|---|---|\n";
  for (const row of ingest) {
    const backends =
      row.cpuUs.bigBackends === undefined
        ? '—'
        : `${row.cpuUs.emptyBackends!.toFixed(0)} / ${row.cpuUs.bigBackends.toFixed(0)}`;
    out += `| ${row.store} | ${row.empty.toFixed(0)} | ${row.big.toFixed(0)} | ${(row.big / row.empty).toFixed(2)} | ${row.emptyP99} | ${row.bigP99} | ${row.cpuUs.empty.toFixed(0)} / ${row.cpuUs.big.toFixed(0)} | ${backends} |\n`;
  }
  out += `\nadmin pages on the big store: ${REQUESTS} requests each, one at a time\n| page | ${[...new Set(pages.map((p) => p.store))].map((s) => `${s} p50 / p99 / max ms`).join(' | ')} |\n`;
  const stores = [...new Set(pages.map((p) => p.store))];
  out += `|---|${stores.map(() => '---|').join('')}\n`;
  for (const page of [...new Set(pages.map((p) => p.page))]) {
    const cells = stores.map((store) => {
      const row = pages.find((p) => p.store === store && p.page === page);
      return row ? `${row.p50.toFixed(1)} / ${row.p99.toFixed(1)} / ${row.max.toFixed(0)}` : '—';
    });
    out += `| ${page} | ${cells.join(' | ')} |\n`;
  }
  out +=
    '\nserver resident memory\n| store | server | at start | after ingest | after the pages |\n|---|---|---|---|---|\n' +
    memory.join('\n') +
    '\n';
  process.stdout.write(out);
}
