import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { ErrorCode } from '../src/errors/catalog.js';
import { storedAuthKey } from '../src/store/auth-key-hash.js';
import { openStore } from '../src/store/open-store.js';
import { openSqliteStore } from '../src/store/sqlite/sqlite-store.js';
import type { IngestRequest, Store } from '../src/store/store.js';
import { accountCount, accountId, agentId, agentsOf, sourceId, sourcesPerAccount, SYMBOLS } from './big-log-shape.js';
import { seedPostgres } from './big-log-seed-postgres.js';
import { seedSqlite } from './big-log-seed-sqlite.js';
import { BENCH_PG_URL, median, percentile, redact } from './bench-server.js';

/**
 * `npm run bench -- --store-ingest`: the store's ingest alone (no HTTP), on an empty store and on
 * one holding `BENCH_STORE_SIGNALS` signals (default 1,000,000, the big log's shape), each with the
 * signal log's indexes as they are and as they were before SQLite's 011 / PostgreSQL's 013
 * ("before"). Requests go to the seeded sources in turn, as a multi-tenant store receives them,
 * `BENCH_STORE_IN_FLIGHT` (50) at a time so that the group commit groups them; rounds of
 * `BENCH_STORE_REQUESTS` (2,000) alternate between the stores, `BENCH_STORE_ROUNDS` (7) of
 * each, and the table shows medians. CPU is the process's (SQLite) or the PostgreSQL backends'
 * (read from /proc), per request; wall time includes the disk's syncs and, on PostgreSQL,
 * the round trips.
 */
const N = Number(process.env.BENCH_STORE_SIGNALS ?? 1_000_000);
const REQUESTS = Number(process.env.BENCH_STORE_REQUESTS ?? 2000);
const ROUNDS = Number(process.env.BENCH_STORE_ROUNDS ?? 7);
const IN_FLIGHT = Number(process.env.BENCH_STORE_IN_FLIGHT ?? 50);
const STORES = (process.env.BENCH_STORE_STORES ?? 'sqlite,postgres').split(',');
/**
 * A functions.sql of another build (say `git show HEAD~1:migrations/postgres/functions.sql`): the
 * PostgreSQL variants are then the empty and big stores with today's functions and with those
 * ("functions before"), to compare a change of the ingest function.
 */
const PG_FUNCTIONS_BEFORE = process.env.BENCH_STORE_PG_FUNCTIONS_BEFORE;
/**
 * An already seeded schema of the big log's shape with `BENCH_STORE_SIGNALS` signals (the
 * `--big-log` benchmark's cache, `bench_big_log_<n>_m<migration>`): the PostgreSQL variants are
 * then an empty store and that one, nothing is seeded, and the schema is kept (the rounds' signals
 * stay in it, as the big-log benchmark's own ingest rounds' do).
 */
const PG_BIG_SCHEMA = process.env.BENCH_STORE_PG_BIG_SCHEMA;
/** More `-c name=value` start-up options for every PostgreSQL variant's connections (e.g. `-c jit=off`). */
const PG_OPTIONS = process.env.BENCH_STORE_PG_OPTIONS ?? '';

/** The indexes of the signal log before SQLite's 011 and PostgreSQL's 013 (the same on both). */
const BEFORE = [
  'DROP INDEX signals_rejected_log',
  'CREATE INDEX signals_status_log ON signals (status, received_at, id)',
  'CREATE INDEX signals_account_days ON signals (account_id, status, received_at)',
];

export interface StoreIngestRow {
  store: string;
  variant: string;
  cpuUs: number;
  wallUs: number;
  p99Ms: number;
  maxMs: number;
}

interface Variant {
  name: string;
  store: Store;
  cpu: () => Promise<number>;
  dispose: () => Promise<void>;
}

export async function runStoreIngest(): Promise<StoreIngestRow[]> {
  const rows: StoreIngestRow[] = [];
  for (const store of (['SQLite', 'PostgreSQL'] as const).filter((name) =>
    STORES.includes(name === 'SQLite' ? 'sqlite' : 'postgres'),
  )) {
    const variants = store === 'SQLite' ? await sqliteVariants() : await postgresVariants();
    if (variants === null) {
      process.stdout.write(`PostgreSQL at ${redact(BENCH_PG_URL)} not reachable: no PostgreSQL rows\n`);
      continue;
    }
    try {
      const results = new Map<string, { cpu: number[]; wall: number[]; latencies: number[] }>(
        variants.map((v) => [v.name, { cpu: [], wall: [], latencies: [] }]),
      );
      let next = 0;
      for (const variant of variants) next = (await ingestRound(variant, next, 200)).next; // warm-up
      for (let round = 1; round <= ROUNDS; round++) {
        for (const variant of round % 2 === 0 ? [...variants].reverse() : variants) {
          const result = await ingestRound(variant, next, REQUESTS);
          next = result.next;
          const r = results.get(variant.name)!;
          r.cpu.push(result.cpuUs / REQUESTS);
          r.wall.push(result.wallUs / REQUESTS);
          r.latencies.push(...result.latencies);
          process.stdout.write(
            `round ${round} ${store} ${variant.name}: ${(result.cpuUs / REQUESTS).toFixed(0)} µs CPU, ${(result.wallUs / REQUESTS).toFixed(0)} µs wall per request\n`,
          );
        }
      }
      for (const variant of variants) {
        const r = results.get(variant.name)!;
        const sorted = r.latencies.sort((a, b) => a - b);
        rows.push({
          store,
          variant: variant.name,
          cpuUs: median(r.cpu),
          wallUs: median(r.wall),
          p99Ms: percentile(sorted, 0.99),
          maxMs: sorted.at(-1)!,
        });
      }
    } finally {
      for (const variant of variants) await variant.dispose();
    }
  }
  report(rows);
  return rows;
}

/** `count` requests, `IN_FLIGHT` at a time, to the seeded sources in turn. */
async function ingestRound(
  variant: Variant,
  first: number,
  count: number,
): Promise<{ next: number; cpuUs: number; wallUs: number; latencies: number[] }> {
  const sources = accountCount(N) * sourcesPerAccount;
  let k = first;
  const latencies: number[] = [];
  const cpuStart = await variant.cpu();
  const started = performance.now();
  const end = first + count;
  const worker = async () => {
    while (k < end) {
      const i = k++;
      const s = i % sources;
      const sent = performance.now();
      await variant.store.ingest.commit(requestFor(i, Math.floor(s / sourcesPerAccount), s % sourcesPerAccount));
      latencies.push(performance.now() - sent);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  return {
    next: end,
    cpuUs: (await variant.cpu()) - cpuStart,
    wallUs: (performance.now() - started) * 1000,
    latencies,
  };
}

/** Tells this run's signal ids from an earlier run's in a big schema that is kept (`BENCH_STORE_PG_BIG_SCHEMA`). */
const RUN = Date.now().toString(36);

/** Request i: accepted but one in twenty rejected, the symbols in turn; ids sort after the seeded log's. */
function requestFor(i: number, account: number, source: number): IngestRequest {
  const now = new Date();
  const symbol = SYMBOLS[i % SYMBOLS.length]!;
  const rejected = i % 20 === 0;
  return {
    id: `sig_zz${RUN}${i.toString(16).padStart(11, '0')}`,
    sourceId: sourceId(account, source),
    sourceRevision: 0,
    accountId: accountId(account),
    receivedAt: now.toISOString(),
    period: now.toISOString().slice(0, 7),
    contentType: 'text/plain',
    rawBody: rejected ? `${symbol},buyx,vol=0.1` : `${symbol},buy,vol=0.1,sl_pips=20`,
    idempotencyKey: null,
    requestHash: null,
    idempotencySince: new Date(now.getTime() - 86_400_000).toISOString(),
    duplicateCheck: null,
    verdict: rejected
      ? {
          kind: 'reject',
          httpStatus: 422,
          problems: [{ code: ErrorCode.UNKNOWN_ACTION, detail: "unknown action 'buyx'", param: 'action' }],
        }
      : {
          kind: 'accept',
          signal: { symbol, action: 'buy', volume: { type: 'lots', value: 0.1 }, sl: { type: 'pips', value: 20 } },
          signalJson: JSON.stringify({
            symbol,
            action: 'buy',
            volume: { type: 'lots', value: 0.1 },
            sl: { type: 'pips', value: 20 },
          }),
          expiresAt: new Date(now.getTime() + 120_000).toISOString(),
          quotaExhausted: { code: ErrorCode.QUOTA_SIGNALS_IN, detail: 'The monthly signal quota is used up.' },
        },
  };
}

/** Accounts, sources and agents of the big log's shape, without signals (the empty stores). */
async function seedTenants(store: Store): Promise<void> {
  const created = new Date(Date.now() - 86_400_000).toISOString();
  for (let a = 0; a < accountCount(N); a++) {
    await store.accounts.create({
      id: accountId(a),
      name: `tenant ${a}`,
      monthlySignalQuota: 100_000_000,
      createdAt: created,
    });
    for (let k = 0; k < agentsOf(a); k++) {
      await store.agents.create({
        id: agentId(a, k),
        accountId: accountId(a),
        name: `agent ${k}`,
        tokenHash: `bench_${a}_${k}`,
        createdAt: created,
        lastSeenAt: null,
        state: null,
      });
    }
    for (let s = 0; s < sourcesPerAccount; s++) {
      await store.sources.create({
        id: sourceId(a, s),
        accountId: accountId(a),
        name: `source ${s}`,
        ...storedAuthKey(`bench_key_${a}_${s}`),
        active: true,
        hmacSecret: null,
        agentIds: [],
        allowedIps: [],
        maxSignalAgeSeconds: 120,
        duplicateWindowSeconds: 0,
        createdAt: created,
        revision: 0,
      });
    }
  }
}

/** SQLite stores in a temp directory: empty and big, with the indexes now and before. */
async function sqliteVariants(): Promise<Variant[]> {
  const root = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-store-'));
  const dirs = ['empty', 'empty, before', 'big', 'big, before'].map((name) => ({
    name,
    dir: path.join(root, name.replaceAll(/[, ]+/g, '-')),
  }));
  const file = (dir: string) => path.join(dir, 'signalgate.db');
  for (const { dir } of dirs) {
    const store = await openStore({ dataDir: dir });
    if (!dir.includes('big')) await seedTenants(store);
    await store.close();
  }
  const started = Date.now();
  seedSqlite(file(dirs[2]!.dir), N, Date.now() - 60_000, (done) =>
    process.stdout.write(
      `SQLite: seeded ${done.toLocaleString('en')} signals (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
    ),
  );
  copyFileSync(file(dirs[2]!.dir), file(dirs[3]!.dir));
  for (const { name, dir } of dirs.filter((d) => d.name.endsWith('before'))) {
    const db = new Database(file(dir));
    for (const sql of BEFORE) db.exec(sql);
    db.close();
    process.stdout.write(`SQLite: ${name} store has the indexes of before\n`);
  }
  const variants: Variant[] = [];
  for (const { name, dir } of dirs) {
    // As the server opens it: checkpoints at COMMIT, SQLite's own.
    const store = openSqliteStore({ dataDir: dir });
    await store.migrate();
    variants.push({ name, store, cpu: processCpuUs, dispose: () => store.close() });
  }
  const dispose = variants[0]!.dispose;
  variants[0]!.dispose = async () => {
    await dispose();
    rmSync(root, { recursive: true, force: true });
  };
  return variants;
}

/** Four PostgreSQL schemas: empty and big, each with the indexes now and before; null when unreachable. */
async function postgresVariants(): Promise<Variant[] | null> {
  const admin = new pg.Client({ connectionString: BENCH_PG_URL });
  try {
    await admin.connect();
  } catch {
    return null;
  }
  const tag = `${process.pid}_${Date.now().toString(36)}`;
  const variants: Variant[] = [];
  try {
    const names =
      PG_BIG_SCHEMA !== undefined
        ? ['empty', 'big']
        : PG_FUNCTIONS_BEFORE === undefined
          ? ['empty', 'empty, before', 'big', 'big, before']
          : ['empty', 'empty, functions before', 'big', 'big, functions before'];
    for (const name of names) {
      const cached = PG_BIG_SCHEMA !== undefined && name === 'big';
      const schema = cached ? PG_BIG_SCHEMA : `bench_store_${name.replaceAll(/[, ]+/g, '_')}_${tag}`;
      if (!cached) await admin.query(`CREATE SCHEMA ${schema}`);
      const url = new URL(BENCH_PG_URL);
      url.searchParams.set('options', `-c search_path=${schema} ${PG_OPTIONS}`.trim());
      url.searchParams.set('application_name', schema);
      let store = await openStore({ dataDir: '/nonexistent', databaseUrl: url.toString(), schema });
      if (cached) {
        // Seeded already.
      } else if (name.startsWith('big')) {
        await store.close();
        const started = Date.now();
        await seedPostgres(url.toString(), N, Date.now() - 60_000, (done) =>
          process.stdout.write(
            `PostgreSQL ${name}: seeded ${done.toLocaleString('en')} signals (${((Date.now() - started) / 1000).toFixed(0)} s)\n`,
          ),
        );
        store = await openStore({ dataDir: '/nonexistent', databaseUrl: url.toString(), schema });
      } else {
        await seedTenants(store);
      }
      if (name.endsWith('functions before')) {
        const functions = new pg.Client({ connectionString: url.toString() });
        await functions.connect();
        await functions.query(readFileSync(PG_FUNCTIONS_BEFORE!, 'utf8'));
        await functions.end();
      } else if (name.endsWith('before'))
        for (const sql of BEFORE)
          await admin.query(
            sql.replace(/ON signals|INDEX signals_rejected_log/, (m) =>
              m === 'ON signals' ? `ON ${schema}.signals` : `INDEX ${schema}.signals_rejected_log`,
            ),
          );
      if (!cached) await admin.query(`ANALYZE ${schema}.signals`);
      const opened = store;
      variants.push({
        name,
        store: opened,
        cpu: backendCpuUs(admin, schema),
        dispose: async () => {
          await opened.close();
          if (!cached) await admin.query(`DROP SCHEMA ${schema} CASCADE`);
        },
      });
    }
  } catch (error) {
    for (const variant of variants) await variant.dispose().catch(() => undefined);
    await admin.end();
    throw error;
  }
  const last = variants.at(-1)!;
  const dispose = last.dispose;
  last.dispose = async () => {
    await dispose();
    await admin.end();
  };
  return variants;
}

async function processCpuUs(): Promise<number> {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
}

/**
 * CPU of the PostgreSQL backends serving a store (its connections carry the schema as their
 * application name), summed from /proc (clock ticks of 10 ms). A backend that ended meanwhile
 * (the pool closed an idle connection) is no longer counted: rounds keep every connection busy.
 */
function backendCpuUs(admin: pg.Client, applicationName: string): () => Promise<number> {
  return async () => {
    const { rows } = await admin.query<{ pid: number }>(
      'SELECT pid FROM pg_stat_activity WHERE application_name = $1',
      [applicationName],
    );
    let total = 0;
    for (const { pid } of rows) {
      try {
        const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
        total += ((Number(fields[11]) + Number(fields[12])) / 100) * 1e6;
      } catch {
        // Ended between the query and the read.
      }
    }
    return total;
  };
}

function report(rows: StoreIngestRow[]): void {
  let out = `\nstore ingest alone: ${N.toLocaleString('en')} signals in the big stores; medians of ${ROUNDS} alternating rounds of ${REQUESTS} requests, ${IN_FLIGHT} in flight\n`;
  out +=
    '| store | variant | CPU µs / request | wall µs / request | request p99 ms | slowest ms |\n|---|---|---|---|---|---|\n';
  for (const row of rows)
    out += `| ${row.store} | ${row.variant} | ${row.cpuUs.toFixed(0)} | ${row.wallUs.toFixed(0)} | ${row.p99Ms.toFixed(1)} | ${row.maxMs.toFixed(0)} |\n`;
  process.stdout.write(out);
}
