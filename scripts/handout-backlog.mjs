// What one push-session hand-out costs against the agent's backlog, per statement, on SQLite and
// PostgreSQL: the step a soak's agent that has fallen behind makes at each ack (its window of 100
// held, one acknowledged, one more handed out), with `backlog` more deliveries queued behind it.
// Each hand-out runs in a transaction rolled back, so every repetition meets the same rows.
//
//   node scripts/handout-backlog.mjs [dist dir, default ./dist] [backlogs, default 0,1000,10000,100000]
//
// Prints, per store and backlog, each statement's median µs, the hand-out's median µs and the
// plan of each statement (SQLite: EXPLAIN QUERY PLAN; PostgreSQL: EXPLAIN ANALYZE of the one
// statement). PostgreSQL works in a schema `sg_t_handout_<pid>` of postgres://postgres@127.0.0.1/test,
// dropped at the end.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { URL, pathToFileURL } from 'node:url';
import pg from 'pg';

const dist = path.resolve(process.argv[2] ?? 'dist');
const backlogs = (process.argv[3] ?? '0,1000,10000,100000').split(',').map(Number);
const REPS = Number(process.env.HANDOUT_REPS ?? 200);
const WINDOW = 100;
const DATABASE_URL = process.env.SIGNALGATE_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const print = (text) => process.stdout.write(`${text}\n`);
const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
const { openStore } = await load('store/open-store.js');

const T0 = Date.parse('2030-01-15T12:00:00.000Z');
const at = (ms) => new Date(T0 + ms).toISOString();
const NOW = at(5000);
const median = (list) => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)];

/** An account, its agent and a source routing to it, and one signal ingested: the template row. */
async function seed(store) {
  const accountId = 'acc-handout';
  await store.createAccount({ id: accountId, name: 'Desk', monthlySignalQuota: 10_000_000, createdAt: at(0) });
  const agent = { id: 'agt-handout', accountId, name: 'agent', tokenHash: 'tok-handout', createdAt: at(0), lastSeenAt: null, state: null };
  await store.createAgent(agent);
  const source = {
    id: 'src-handout', accountId, name: 'TradingView', authKey: 'key-handout', active: true, hmacSecret: null,
    agentIds: [agent.id], allowedIps: [], maxSignalAgeSeconds: 120, duplicateWindowSeconds: 0, createdAt: at(0), revision: 0,
  };
  await store.createSource(source);
  const signal = { symbol: 'EURUSD', action: 'buy', volume: { type: 'lots', value: 0.1 } };
  await store.ingest({
    id: 'sig-template', sourceId: source.id, sourceRevision: 0, accountId, receivedAt: at(1000), period: '2030-01',
    contentType: 'text/plain', rawBody: 'EURUSD,buy,vol=0.1', idempotencyKey: null, requestHash: null,
    idempotencySince: at(1000 - 86_400_000), duplicateCheck: null,
    verdict: { kind: 'accept', signal, signalJson: JSON.stringify(signal), expiresAt: at(3_600_000), quotaExhausted: { code: 'QUOTA_SIGNALS_IN', detail: 'used up' } },
  });
  return agent.id;
}

// The agent's queue: seq 1 (the template's) acknowledged, seqs 2..WINDOW delivered (the session
// holds them), then `backlog` + 2 queued; each delivery has a signal of its own. Deadlines
// alternate an hour and two hours ahead: not in seq order, as with sources of different ages.
// No ANALYZE on SQLite: the store never runs it, so its plans are chosen without statistics.

async function sqliteRun() {
  const { SqliteConnection } = await load('store/sqlite/connection.js');
  const { SqliteDeliveries } = await load('store/sqlite/deliveries.js');
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-handout-'));
  const store = await openStore({ dataDir });
  const agentId = await seed(store);
  await store.close();
  const connection = new SqliteConnection(path.join(dataDir, 'signalgate.db'), 5000);
  const db = connection.db;
  const cols = db.prepare('PRAGMA table_info(signals)').all().map((c) => c.name);
  const select = cols.map((c) => (c === 'id' ? "'bl-' || n" : c)).join(', ');
  let made = 0;
  const grow = (upTo) => {
    db.transaction(() => {
      db.prepare(
        `INSERT INTO signals (${cols.join(', ')})
         WITH RECURSIVE c(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM c WHERE n < ?)
         SELECT ${select} FROM signals, c WHERE signals.id = 'sig-template'`,
      ).run(made + 1, upTo);
      db.prepare(
        `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, attempts, received_at)
         WITH RECURSIVE c(n) AS (SELECT ? UNION ALL SELECT n + 1 FROM c WHERE n < ?)
         SELECT 'bl-' || n, ?, n + 1, CASE WHEN n < ? THEN 'delivered' ELSE 'queued' END,
                CASE n % 2 WHEN 0 THEN ? ELSE ? END, 1, ? FROM c`,
      ).run(made + 1, upTo, agentId, WINDOW, at(3_600_000), at(7_200_000), at(1000));
      db.prepare('UPDATE agents SET last_seq = ? WHERE id = ?').run(upTo + 1, agentId);
    })();
    made = upTo;
  };
  // seq 1 (the template's delivery) is the one acknowledged.
  db.prepare("UPDATE deliveries SET status = 'executed', acked_at = ? WHERE signal_id = 'sig-template'").run(at(2000));

  // Each statement's time, by its text; every hand-out in a transaction rolled back.
  const times = new Map();
  const timed = (sql, statement) =>
    new Proxy(statement, {
      get(target, prop) {
        if (prop === 'pluck') return (...args) => timed(sql, target.pluck(...args));
        if (prop === 'all' || prop === 'get' || prop === 'run') {
          return (...args) => {
            const start = process.hrtime.bigint();
            const result = target[prop](...args);
            const list = times.get(sql) ?? [];
            list.push(Number(process.hrtime.bigint() - start) / 1000);
            times.set(sql, list);
            return result;
          };
        }
        const value = target[prop];
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  const probe = { db, stmt: (sql) => timed(sql, connection.stmt(sql)) };
  const writes = {
    run: async (fn) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        return fn();
      } finally {
        db.exec('ROLLBACK');
      }
    },
  };
  const deliveries = new SqliteDeliveries(probe, writes, () => undefined);
  const rows = [];
  for (const backlog of backlogs) {
    grow(WINDOW + backlog + 1);
    times.clear();
    const totals = [];
    for (let i = 0; i < REPS; i++) {
      const start = process.hrtime.bigint();
      // The session's step after an ack: it holds seqs 2..WINDOW (99) and asks for what follows.
      const out = await deliveries.handOut(agentId, NOW, WINDOW, WINDOW);
      totals.push(Number(process.hrtime.bigint() - start) / 1000);
      if (out.signals.length !== 1) throw new Error(`expected one fresh delivery, got ${out.signals.length}`);
    }
    const statements = [...times.entries()].map(([sql, list]) => ({ sql: sql.replace(/\s+/g, ' ').slice(0, 60), us: median(list) }));
    rows.push({ store: 'sqlite', backlog, handOut: median(totals), statements });
    if (backlog === backlogs[backlogs.length - 1]) {
      for (const sql of times.keys()) {
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...placeholders(sql, agentId)).map((r) => r.detail);
        print(`sqlite plan: ${sql.replace(/\s+/g, ' ').slice(0, 70)}...\n    ${plan.join('\n    ')}`);
      }
    }
  }
  connection.close();
  rmSync(dataDir, { recursive: true, force: true });
  return rows;
}

/** Values for EXPLAIN QUERY PLAN: the plan does not depend on them. */
function placeholders(sql, agentId) {
  const count = (sql.match(/\?/g) ?? []).length;
  return Array.from({ length: count }, (_, i) => (i === 0 && !sql.startsWith('UPDATE deliveries SET status = \'delivered\'') ? agentId : i));
}

async function postgresRun() {
  const { takeDeliveriesFor } = await load('store/postgres/take-deliveries.js');
  const schema = `sg_t_handout_${process.pid}`;
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`CREATE SCHEMA ${schema}`);
  const rows = [];
  try {
    const store = await openStore({ dataDir: '/nonexistent', databaseUrl: DATABASE_URL, schema });
    const agentId = await seed(store);
    await store.close();
    const url = new URL(DATABASE_URL);
    url.searchParams.set('options', `-c search_path=${schema}`);
    const client = new pg.Client({ connectionString: url.toString() });
    await client.connect();
    const { rows: colRows } = await client.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'signals' ORDER BY ordinal_position`,
      [schema],
    );
    const cols = colRows.map((r) => r.column_name);
    const select = cols.map((c) => (c === 'id' ? "'bl-' || n" : c)).join(', ');
    await client.query("UPDATE deliveries SET status = 'executed', acked_at = $1 WHERE signal_id = 'sig-template'", [at(2000)]);
    let made = 0;
    for (const backlog of backlogs) {
      const upTo = WINDOW + backlog + 1;
      await client.query(`INSERT INTO signals (${cols.join(', ')}) SELECT ${select} FROM signals, generate_series($1::int, $2::int) n WHERE signals.id = 'sig-template'`, [made + 1, upTo]);
      await client.query(
        `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, attempts, received_at, source_id, symbol)
         SELECT 'bl-' || n, $3, n + 1, CASE WHEN n < $4 THEN 'delivered' ELSE 'queued' END,
                CASE n % 2 WHEN 0 THEN $5::timestamptz ELSE $6::timestamptz END, 1, $7, t.source_id, t.symbol
           FROM generate_series($1::int, $2::int) n, signals t WHERE t.id = 'sig-template'`,
        [made + 1, upTo, agentId, WINDOW, at(3_600_000), at(7_200_000), at(1000)],
      );
      await client.query('UPDATE agents SET last_seq = $1 WHERE id = $2', [upTo + 1, agentId]);
      made = upTo;
      await client.query('VACUUM ANALYZE deliveries');
      await client.query('VACUUM ANALYZE signals');
      // The statement's text, as the store sends it.
      let captured;
      await takeDeliveriesFor({ query: async (q) => ((captured = q), { rows: [] }) }, 'session', schema, [{ agentId, limit: WINDOW, after: WINDOW }], NOW);
      const totals = [];
      for (let i = 0; i < REPS; i++) {
        await client.query('BEGIN');
        const start = process.hrtime.bigint();
        const out = await takeDeliveriesFor(client, 'session', schema, [{ agentId, limit: WINDOW, after: WINDOW }], NOW);
        totals.push(Number(process.hrtime.bigint() - start) / 1000);
        await client.query('ROLLBACK');
        const handOut = out.get(agentId);
        if (handOut?.signals.length !== 1) throw new Error(`expected one fresh delivery, got ${handOut?.signals.length}`);
      }
      await client.query('BEGIN');
      const { rows: plan } = await client.query(`EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${captured.text}`, captured.values);
      await client.query('ROLLBACK');
      const lines = plan.map((r) => r['QUERY PLAN']);
      rows.push({ store: 'postgres', backlog, handOut: median(totals), statements: [] });
      print(`postgres plan at backlog ${backlog}:\n    ${lines.filter((l) => process.env.HANDOUT_FULL_PLAN || /Scan|CTE|Execution/.test(l)).join('\n    ')}`);
    }
    await client.end();
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
  return rows;
}

const results = [...(await sqliteRun()), ...(await postgresRun())];
for (const row of results) {
  print(`${row.store} backlog ${row.backlog}: hand-out median ${row.handOut.toFixed(0)} µs` + row.statements.map((s) => `\n    ${s.us.toFixed(1)} µs  ${s.sql}`).join(''));
}
