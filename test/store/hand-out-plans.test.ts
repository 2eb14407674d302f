import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { GroupedAcks } from '../../src/store/postgres/grouped-acks.js';
import { SESSION_SQL, takeDeliveriesFor } from '../../src/store/postgres/take-deliveries.js';
import { EXPIRE_AGENT_DUE_SQL } from '../../src/store/sqlite/deliveries.js';
import { SQLITE_FILE_NAME } from '../../src/store/sqlite/sqlite-store.js';
import { freshPostgresSchema, type TestSchema } from '../support/postgres.js';
import { at, request, seed } from './store-harness.js';

/**
 * A hand-out reads only what is due and the agent's window, however long the agent's queue: an
 * agent that fell behind otherwise made every hand-out slower and fell further behind (read from
 * the plans; docs/decisions/0009-hand-out-statements.md).
 */
describe('the hand-out on SQLite', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'signalgate-hand-out-plans-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('expires the agent’s due deliveries through their deadline index, not its whole queue', async () => {
    const store = await openStore({ dataDir });
    await store.close();
    const db = new Database(join(dataDir, SQLITE_FILE_NAME), { readonly: true });
    try {
      const plan = (
        db.prepare(`EXPLAIN QUERY PLAN ${EXPIRE_AGENT_DUE_SQL}`).all('agt-1', at(0)) as { detail: string }[]
      ).map((r) => r.detail);
      expect(plan).toEqual(['SEARCH deliveries USING INDEX deliveries_agent_due (agent_id=? AND expires_at<?)']);
    } finally {
      db.close();
    }
  });
});

/** Copies the signal `templateId` `count` times, as 'sig-1' to 'sig-<count>', every other column the same. */
async function copySignal(
  db: pg.Client | pg.Pool,
  schemaName: string,
  templateId: string,
  count: number,
): Promise<void> {
  const { rows: columns } = await db.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns WHERE table_schema = $1 AND table_name = 'signals' ORDER BY ordinal_position`,
    [schemaName],
  );
  const names = columns.map((c) => c.column_name);
  await db.query(
    `INSERT INTO signals (${names.join(', ')})
     SELECT ${names.map((c) => (c === 'id' ? "'sig-' || n" : c)).join(', ')} FROM signals, generate_series(1, $2::int) n WHERE signals.id = $1`,
    [templateId, count],
  );
}

describe('the hand-out on PostgreSQL', () => {
  let schema: TestSchema;
  afterAll(() => schema?.drop());

  it('reads neither the agent’s whole queue nor the whole table when one agent holds 20,000 queued deliveries', async () => {
    schema = await freshPostgresSchema('hand_out_plans');
    const store = await openStore({
      dataDir: '/nonexistent',
      databaseUrl: schema.connectionString,
      schema: schema.schema,
    });
    const seeded = await seed(store, { route: [0] });
    // One signal ingested as any other, copied 20,000 times below; its own delivery acknowledged.
    const template = await store.ingest.commit(request(seeded));
    await store.close();
    const agentId = seeded.agents[0]!.id;
    const client = new pg.Client({ connectionString: schema.urlWithSchema });
    await client.connect();
    try {
      const templateId = template.kind === 'recorded' ? template.record.id : '';
      await client.query("UPDATE deliveries SET status = 'executed' WHERE signal_id = $1", [templateId]);
      await copySignal(client, schema.schema, templateId, 20000);
      // Seqs 2-100 held by the session, the rest queued; deadlines not in queue order.
      await client.query(
        `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, attempts, received_at, source_id, symbol)
         SELECT 'sig-' || n, $1, n + 1, CASE WHEN n < 100 THEN 'delivered' ELSE 'queued' END,
                CASE n % 2 WHEN 0 THEN $2::timestamptz ELSE $3::timestamptz END, 1, $4, t.source_id, t.symbol
           FROM generate_series(1, 20000) n, signals t WHERE t.id = $5`,
        [agentId, at(3_600_000), at(7_200_000), at(1000), templateId],
      );
      await client.query('ANALYZE deliveries');
      await client.query('BEGIN');
      const { rows } = await client.query<{ 'QUERY PLAN': string }>(`EXPLAIN (ANALYZE, COSTS OFF) ${SESSION_SQL}`, [
        [agentId],
        [100],
        schema.schema,
        at(5000),
        [100],
        [seeded.agents[0]!.tokenHash],
      ]);
      await client.query('ROLLBACK');
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      // It handed out the one after the 99 held.
      expect(plan).toMatch(/CTE Scan on handed \(actual time=[\d.]+ rows=1 loops=1\)/);
      expect(plan).toContain('Index Scan using deliveries_agent_due on deliveries');
      expect(plan).not.toMatch(/Seq Scan on deliveries/);
    } finally {
      await client.end();
    }
  });
});

/**
 * Rows of `deliveries` read by sequential scans while `work` runs on the pool's one connection.
 * The backend's counters reach pg_stat_user_tables when it next goes idle after
 * pg_stat_force_next_flush().
 */
async function deliveriesReadWhole(pool: pg.Pool, work: () => Promise<unknown>): Promise<number> {
  const read = async (): Promise<number> => {
    await pool.query('SELECT pg_stat_force_next_flush()');
    const { rows } = await pool.query<{ n: string }>(
      "SELECT seq_tup_read AS n FROM pg_stat_user_tables WHERE relid = 'deliveries'::regclass",
    );
    return Number(rows[0]!.n);
  };
  const before = await read();
  await work();
  return (await read()) - before;
}

describe('the hand-out and the acks on PostgreSQL, planned when the table is near empty', () => {
  let schema: TestSchema;
  afterAll(() => schema?.drop());

  it('read only the agents’ own rows once a burst has filled the table', async () => {
    schema = await freshPostgresSchema('plans_warm');
    const store = await openStore({
      dataDir: '/nonexistent',
      databaseUrl: schema.connectionString,
      schema: schema.schema,
    });
    const seeded = await seed(store, { agents: 20, route: Array.from({ length: 20 }, (_, i) => i) });
    const template = await store.ingest.commit(request(seeded));
    await store.close();
    const templateId = template.kind === 'recorded' ? template.record.id : '';
    const agents = seeded.agents.map((a) => a.id).sort();
    // One connection, as a long-lived pool connection is: what it prepared, it keeps.
    const pool = new pg.Pool({ connectionString: schema.urlWithSchema, max: 1 });
    try {
      const handOut = () =>
        takeDeliveriesFor(
          pool,
          'poll',
          schema.schema,
          agents.map((agentId) => ({ agentId, limit: 10, after: 0, tokenHash: null })),
          at(2000),
        );
      const acks = new GroupedAcks(pool);
      const executed = { status: 'executed', message: null, result: null } as const;
      // The service's first minutes: hand-outs and acks on a table of 20 rows.
      for (let i = 0; i < 10; i++) {
        await handOut();
        await Promise.all(agents.map((agentId) => acks.apply(agentId, templateId, executed, at(2500))));
      }
      await copySignal(pool, schema.schema, templateId, 1000);
      // The burst: 1,000 signals to each agent, 20,000 deliveries, none analyzed yet.
      await pool.query(
        `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, attempts, received_at, source_id, symbol)
         SELECT 'sig-' || n, a.id, n + 1, 'queued', $2, 0, $3, t.source_id, t.symbol
           FROM generate_series(1, 1000) n, unnest($1::text[]) a (id), signals t WHERE t.id = $4`,
        [agents, at(3_600_000), at(1000), templateId],
      );
      const handOutRead = await deliveriesReadWhole(pool, handOut);
      const ackRead = await deliveriesReadWhole(pool, () =>
        Promise.all(agents.map((agentId) => acks.apply(agentId, 'sig-1', executed, at(2500)))),
      );
      // Each agent's 10 handed out, and each of the 20 acks applied, read by key.
      expect(handOutRead).toBe(0);
      expect(ackRead).toBe(0);
      const { rows } = await pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM deliveries WHERE signal_id = 'sig-1' AND status = 'executed'",
      );
      expect(rows[0]!.n).toBe(20);
    } finally {
      await pool.end();
    }
  });
});
