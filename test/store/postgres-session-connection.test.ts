import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { sessionLockKeySql } from '../../src/store/postgres/take-deliveries.js';
import { freshPostgresSchema, TEST_DATABASE_URL, type TestSchema } from '../support/postgres.js';
import { at, request, seed } from './store-harness.js';

/**
 * The push sessions' claims, hand-outs and releases share one connection (the one holding their
 * advisory locks). The driver warns when a query is issued on a connection while another is under
 * way (pg 9 will refuse it), once per process: this file listens from its start.
 */
const OVERLAP = 'already executing a query';
const overlaps: string[] = [];
const onWarning = (warning: Error) => {
  if (warning.message.includes(OVERLAP)) overlaps.push(warning.message);
};

describe('PostgreSQL push sessions on their shared connection', () => {
  let target: TestSchema;
  let store: PostgresStore;
  let admin: pg.Client;

  beforeAll(async () => {
    process.on('warning', onWarning);
    target = await freshPostgresSchema('session_conn');
    store = openPostgresStore({ connectionString: target.connectionString, schema: target.schema });
    await store.migrate();
    admin = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await admin.connect();
  });

  afterAll(async () => {
    process.off('warning', onWarning);
    await admin?.end();
    await store?.close();
    await target?.drop();
  });

  /** The backend holding an agent's session lock. */
  const holderOf = async (agentId: string): Promise<number | undefined> => {
    const key = sessionLockKeySql('$1', '$2');
    const { rows } = await admin.query<{ pid: number }>(
      `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND objsubid = 1 AND granted
          AND classid = ((${key} >> 32) & 4294967295)::oid AND objid = (${key} & 4294967295)::oid`,
      [agentId, target.schema],
    );
    return rows[0]?.pid;
  };

  it('queues claims and releases behind a hand-out under way, and a session released while its hand-out waits gets nothing', async () => {
    const seeded = await seed(store, { agents: 9 });
    type Agent = (typeof seeded.agents)[0];
    const [a, b, c, ...others] = seeded.agents as [Agent, Agent, Agent, ...Agent[]];
    const signal = (await store.ingest.commit(request(seeded, { receivedAt: at(1000) }))).record.id;
    // Sessions go to the connection with the fewest: A, three others, B, three others, then C
    // (below) share A's connection when there are four; the test checks they share one.
    const claimA = (await store.deliveries.claimSession(a.id, a.tokenHash))!;
    const fillers = [];
    for (const agent of others.slice(0, 3))
      fillers.push((await store.deliveries.claimSession(agent.id, agent.tokenHash))!);
    const claimB = (await store.deliveries.claimSession(b.id, b.tokenHash))!;
    for (const agent of others.slice(3))
      fillers.push((await store.deliveries.claimSession(agent.id, agent.tokenHash))!);
    expect(await holderOf(b.id)).toBe(await holderOf(a.id));

    // Another transaction holds agent A's delivery, so A's hand-out stays under way on the
    // sessions' connection until it commits.
    const blocker = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query(`SELECT 1 FROM "${target.schema}".deliveries WHERE agent_id = $1 FOR UPDATE`, [a.id]);
      const holder = (await blocker.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      const takeA = claimA.takeDeliveries(at(2000), 10);
      let waiting = false;
      for (let tries = 0; tries < 400 && !waiting; tries++) {
        const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [
          holder,
        ]);
        waiting = rows.length > 0;
        if (!waiting) await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(waiting).toBe(true);

      // Meanwhile: a new claim, B's hand-out, then B's release (its WebSocket closed).
      const claimingC = store.deliveries.claimSession(c.id, c.tokenHash);
      const takeB = claimB.takeDeliveries(at(2000), 10).then(
        (handOut) => handOut.signals.map((s) => s.id),
        (error: Error) => error.message,
      );
      const releaseB = claimB.release();
      await blocker.query('COMMIT');

      expect((await takeA).signals.map((s) => s.id)).toEqual([signal]);
      const claimC = await claimingC;
      expect(claimC).not.toBeNull();
      await releaseB;
      // B's hand-out would have run after the unlock, without the hold: it is not run.
      expect(await takeB).toEqual(expect.stringContaining('no longer held'));
      const deliveries = (await store.signals.get(signal))!.deliveries;
      expect(deliveries.find((d) => d.agentId === b.id)).toMatchObject({ status: 'queued', attempts: 0 });
      expect((await claimC!.takeDeliveries(at(3000), 10)).signals.map((s) => s.id)).toEqual([signal]);
      expect(await holderOf(c.id)).toBe(await holderOf(a.id));
      await Promise.all([claimA, claimC!, ...fillers].map((claim) => claim.release()));
      expect(overlaps).toEqual([]);
    } finally {
      await blocker.end();
    }
  });

  it('sends one statement at a time while many sessions claim, hand out and release at once', async () => {
    const seeded = await seed(store, { agents: 30 });
    for (let i = 0; i < 3; i++) await store.ingest.commit(request(seeded, { receivedAt: at(1000 + i) }));
    for (let round = 0; round < 3; round++) {
      const claims = await Promise.all(
        seeded.agents.map((agent) => store.deliveries.claimSession(agent.id, agent.tokenHash)),
      );
      expect(claims.every((claim) => claim !== null)).toBe(true);
      const handOuts = await Promise.all(
        claims.map(async (claim) => {
          const handOut = await claim!.takeDeliveries(at(2000 + round), 10);
          await claim!.release();
          return handOut.signals.length;
        }),
      );
      expect(handOuts).toEqual(seeded.agents.map(() => 3));
    }
    expect(overlaps).toEqual([]);
  });
});
