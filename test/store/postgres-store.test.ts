import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { readMigrationFiles } from '../../src/store/migration-files.js';
import { OutcomeUnknownError } from '../../src/store/outcome-unknown.js';
import { openPostgresStore, type PostgresStore } from '../../src/store/postgres/postgres-store.js';
import {
  freshPostgresSchema,
  TEST_DATABASE_URL,
  terminateSessionWaitingFor,
  withMigratedStore,
  type TestSchema,
} from '../support/postgres.js';
import { accept, at, BUY, PERIOD, request, seed } from './store-harness.js';

async function query<R extends pg.QueryResultRow>(sql: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    return (await client.query<R>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** A connection of its own for `work`, as another transaction of the database would be. */
async function withOtherConnection(
  connectionString: string,
  work: (client: pg.Client) => Promise<void>,
): Promise<void> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    await work(client);
  } finally {
    await client.end();
  }
}

describe('PostgreSQL store', () => {
  it('migrates safely when two instances start at once on a fresh schema', async () => {
    const target = await freshPostgresSchema('migrate');
    const stores = [0, 1, 2].map(() =>
      openPostgresStore({ connectionString: target.connectionString, schema: target.schema }),
    );
    try {
      await Promise.all(stores.map((s) => s.migrate()));
      const applied = await query<{ version: number }>(
        `SELECT version FROM "${target.schema}".schema_migrations ORDER BY version`,
      );
      expect(applied.map((r) => r.version)).toEqual(readMigrationFiles('postgres').map((f) => f.version));
      const tables = await query<{ table_name: string }>(
        'SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY table_name',
        [target.schema],
      );
      expect(tables.map((t) => t.table_name)).toEqual([
        'accounts',
        'agent_states',
        'agents',
        'dashboard_sessions',
        'deliveries',
        'idempotency_keys',
        'leases',
        'ledger_busts',
        'ledger_fills',
        'ledger_funding',
        'notification_channels',
        'notification_outbox',
        'risk_audit',
        'risk_halts',
        'risk_rules',
        'schema_migrations',
        'settings',
        'signals',
        'signals_per_day',
        'sources',
        'usage',
      ]);
      await stores[0]!.migrate();
    } finally {
      await Promise.all(stores.map((s) => s.close()));
      await target.drop();
    }
  });

  it('fails a committed item the ingest call gave no answer for as of unknown outcome', async () => {
    await withMigratedStore('unanswered', async (store, target) => {
      // The function commits every item but drops the last answer, as a faulty one might.
      await query(
        `ALTER FUNCTION "${target.schema}".signalgate_ingest(json, text, text, boolean) RENAME TO signalgate_ingest_real`,
      );
      await query(`CREATE FUNCTION "${target.schema}".signalgate_ingest(items json, scope text, instance text, isolate boolean)
        RETURNS json LANGUAGE sql AS $$
          SELECT COALESCE(json_agg(e ORDER BY i), '[]'::json)
            FROM json_array_elements("${target.schema}".signalgate_ingest_real(items, scope, instance, isolate)) WITH ORDINALITY AS t(e, i)
           WHERE i < json_array_length(items)
        $$`);
      const seeded = await seed(store, { quota: 10 });
      const requests = [request(seeded), request(seeded)];
      const settled = await Promise.allSettled(requests.map((r) => store.ingest.commit(r)));
      expect(settled[0]!.status).toBe('fulfilled');
      expect(settled[1]!.status === 'rejected' && settled[1]!.reason).toBeInstanceOf(OutcomeUnknownError);
      // Right not to answer it as failed: it was stored.
      expect(await store.signals.get(requests[1]!.id)).not.toBeNull();
    });
  });

  it("locks an ack group's deliveries in the hand-outs' order (agent, then seq), so an ack group and a hand-out never deadlock", async () => {
    await withMigratedStore('ack_order', (store, target) =>
      withOtherConnection(target.connectionString, async (handOut) => {
        const seeded = await seed(store, { agents: 2 });
        const signal = request(seeded);
        await store.ingest.commit(signal);
        const [first, second] = [...seeded.agents].sort((x, y) => (x.id < y.id ? -1 : 1));
        for (const agent of [first!, second!])
          expect(await store.deliveries.take(agent.id, at(2000), 10)).toHaveLength(1);
        // Another transaction locks the agents' deliveries as a hand-out does: the first agent's ...
        await handOut.query('BEGIN');
        await handOut.query(`SELECT 1 FROM "${target.schema}".deliveries WHERE agent_id = $1 FOR UPDATE`, [first!.id]);
        // ... while one ack group names the second agent's delivery before the first's.
        const executed = { status: 'executed', message: null, result: null } as const;
        const acks = Promise.allSettled(
          [second!, first!].map((agent) => store.deliveries.ack(agent.id, signal.id, executed, at(3000))),
        );
        await waitUntilWaitingForRowLock('acked_after_expiry');
        // ... then the second's. Had the group locked the second agent's row first, each would now
        // wait for the other: PostgreSQL fails one of the two after deadlock_timeout.
        await handOut.query(`SELECT 1 FROM "${target.schema}".deliveries WHERE agent_id = $1 FOR UPDATE`, [second!.id]);
        await handOut.query('COMMIT');
        const settled = await acks;
        expect(settled.map((s) => (s.status === 'fulfilled' ? s.value.kind : String(s.reason)))).toEqual([
          'acked',
          'acked',
        ]);
      }),
    );
  });

  it("hands out to one agent's poll while another's hand-out waits for a lock", async () => {
    await withMigratedStore('poll_takes', (store, target) =>
      withOtherConnection(target.connectionString, async (holder) => {
        const seeded = await seed(store, { agents: 2 });
        await store.ingest.commit(request(seeded));
        const [first, second] = seeded.agents;
        // Another transaction holds the first agent's delivery, as an ack group applying does.
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM "${target.schema}".deliveries WHERE agent_id = $1 FOR UPDATE`, [first!.id]);
        let firstAnswered = false;
        const firstTake = store.deliveries.take(first!.id, at(2000), 10).finally(() => (firstAnswered = true));
        await waitUntilWaitingForRowLock('signalgate.session');
        // The second agent's poll is not held behind the first's statement (before, one hand-out
        // statement was in flight at a time, so this waited until the holder committed).
        expect(await store.deliveries.take(second!.id, at(2000), 10)).toHaveLength(1);
        expect(firstAnswered).toBe(false);
        await holder.query('COMMIT');
        expect(await firstTake).toHaveLength(1);
      }),
    );
  });

  it("records an agent's snapshot while an ingest holds the agent's row locked, its presence following once the row is free", async () => {
    await withMigratedStore('state_lock', (store, target) =>
      withOtherConnection(target.connectionString, async (holder) => {
        const seeded = await seed(store, { agents: 1 });
        const agent = seeded.agents[0]!;
        // As an ingest numbering the agent's deliveries holds it, to its COMMIT.
        await holder.query('BEGIN');
        await holder.query(`SELECT 1 FROM "${target.schema}".agents WHERE id = $1 FOR NO KEY UPDATE`, [agent.id]);
        const state = { balance: 10_000, positions: [{ symbol: 'EURUSD', volume: 0.1 }] };
        // Before, the snapshot was written into that row and waited for the COMMIT.
        await store.agents.saveState(agent.id, state, at(5000));
        expect(await store.agents.get(agent.id)).toMatchObject({ state, lastSeenAt: null });
        await holder.query('COMMIT');
        // Presence keeps the later time, whichever write lands last (the first one's retries go on).
        const later = { balance: 10_050, positions: [] };
        await store.agents.saveState(agent.id, later, at(7000));
        await expect
          .poll(async () => await store.agents.get(agent.id))
          .toMatchObject({ state: later, lastSeenAt: at(7000) });
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect(await store.agents.get(agent.id)).toMatchObject({ state: later, lastSeenAt: at(7000) });
        // The snapshot of an agent deleted meanwhile is dropped with it, not an error.
        expect(await store.agents.delete(agent.id)).toEqual({ kind: 'deleted' });
        await expect(store.agents.saveState(agent.id, state, at(6000))).resolves.toBeUndefined();
        expect(await store.agents.get(agent.id)).toBeNull();
      }),
    );
  });

  it('refuses a schema name it would have to quote', () => {
    expect(() => openPostgresStore({ connectionString: TEST_DATABASE_URL, schema: 'Bad"; DROP' })).toThrow(/schema/);
  });

  describe('two instances on one schema', () => {
    let target: TestSchema;
    let a: PostgresStore;
    let b: PostgresStore;

    beforeAll(async () => {
      target = await freshPostgresSchema('pair');
      a = openPostgresStore({ connectionString: target.connectionString, schema: target.schema, maxConnections: 5 });
      b = openPostgresStore({ connectionString: target.connectionString, schema: target.schema, maxConnections: 5 });
      await Promise.all([a.migrate(), b.migrate()]);
    });

    afterAll(async () => {
      await a?.close();
      await b?.close();
      await target?.drop();
    });

    it('charges exactly the quota when 200 ingests race across both', async () => {
      const seeded = await seed(a, { quota: 50, agents: 2 });
      const outcomes = await Promise.all(
        Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? a : b).ingest.commit(request(seeded))),
      );
      expect(outcomes.filter((o) => o.record.status === 'accepted')).toHaveLength(50);
      expect(outcomes.filter((o) => o.record.httpStatus === 429)).toHaveLength(150);
      expect(await b.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 50, limit: 50 });
      const [first, second] = await Promise.all(
        seeded.agents.map((agent) => a.deliveries.take(agent.id, at(2000), 100)),
      );
      expect(first!.map((d) => d.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
      // Both agents see the signals in the same (commit) order.
      expect(second!.map((d) => d.id)).toEqual(first!.map((d) => d.id));
    });

    it('records one signal when a repeated key reaches both at once', async () => {
      const seeded = await seed(a, { quota: 100, agents: 1 });
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          (i % 2 === 0 ? a : b).ingest.commit(request(seeded, { idempotencyKey: 'dup', requestHash: 'h' })),
        ),
      );
      expect(outcomes.filter((o) => o.kind === 'recorded')).toHaveLength(1);
      expect(outcomes.filter((o) => o.kind === 'replay')).toHaveLength(29);
      expect((await a.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
      expect(await b.deliveries.take(seeded.agents[0]!.id, at(2000), 10)).toHaveLength(1);
    });

    it('lets exactly one of two racing requests take over an expired key', async () => {
      const seeded = await seed(a, { quota: 100 });
      await a.ingest.commit(request(seeded, { idempotencyKey: 'old', requestHash: 'h', receivedAt: at(0) }));
      const later = {
        idempotencyKey: 'old',
        requestHash: 'h',
        receivedAt: at(90_000_000),
        idempotencySince: at(3_600_000),
      };
      const outcomes = await Promise.all([
        a.ingest.commit(request(seeded, later)),
        b.ingest.commit(request(seeded, later)),
      ]);
      expect(outcomes.map((o) => o.kind).sort()).toEqual(['recorded', 'replay']);
      expect((await a.usage.get(seeded.accountId, PERIOD))!.used).toBe(2);
    });

    it('keeps every account’s quota exact when ingests for several accounts race across both', async () => {
      const accounts = await Promise.all([0, 1, 2, 3].map(() => seed(a, { quota: 20, agents: 1 })));
      const outcomes = await Promise.all(
        Array.from({ length: 240 }, (_, i) =>
          (i % 2 === 0 ? a : b).ingest.commit(request(accounts[(i * 5 + (i >> 3)) % 4]!)),
        ),
      );
      expect(outcomes.filter((o) => o.record.status === 'accepted')).toHaveLength(80);
      for (const seeded of accounts) {
        expect(await a.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 20, limit: 20 });
        const taken = await b.deliveries.take(seeded.agents[0]!.id, at(2000), 100);
        expect(taken.map((d) => d.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
      }
    });

    it('keeps the quota exact beside a charge of the previous functions revision still in flight (a rolling upgrade)', async () => {
      const seeded = await seed(a, { quota: 4, agents: 1 });
      await a.ingest.commit(request(seeded));
      // An instance of the previous build mid-batch: revision 3's per-signal upsert, twice, not yet committed.
      const old = new pg.Client({ connectionString: target.urlWithSchema });
      await old.connect();
      try {
        await old.query('BEGIN');
        for (let i = 0; i < 2; i++) {
          await old.query(
            `INSERT INTO usage AS u (account_id, period, used)
             SELECT a.id, $2, 1 FROM accounts a WHERE a.id = $1 AND a.monthly_signal_quota > 0
             ON CONFLICT (account_id, period) DO UPDATE SET used = u.used + 1
              WHERE u.used < (SELECT monthly_signal_quota FROM accounts WHERE id = u.account_id)`,
            [seeded.accountId, PERIOD],
          );
        }
        const holder = (await old.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
        // One turn of this build: one batch, which must wait for the old one's COMMIT and count from it.
        const batch = Promise.all([request(seeded), request(seeded)].map((r) => b.ingest.commit(r)));
        let waiting = false;
        for (let tries = 0; tries < 400 && !waiting; tries++) {
          // Asked outside the open transaction, which sees one snapshot of the activity.
          const rows = await query('SELECT pid FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))', [holder]);
          waiting = rows.length > 0;
          if (!waiting) await new Promise((resolve) => setTimeout(resolve, 25));
        }
        expect(waiting).toBe(true);
        await old.query('COMMIT');
        const outcomes = await batch;
        expect(outcomes.map((o) => [o.record.status, o.record.httpStatus, o.record.quota?.used ?? null])).toEqual([
          ['accepted', 202, 4],
          ['rejected', 429, null],
        ]);
        expect(await a.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 4, limit: 4 });
      } finally {
        await old.end();
      }
    });

    describe('when one request of a batch fails in the database', () => {
      const flaky = async (sql: string) => query(sql.replaceAll('$schema', `"${target.schema}"`));

      beforeAll(async () => {
        // Fails the signal insert (after the quota charge) for chosen bodies: 'boom' always,
        // 'deadlock-once' with a deadlock error the first two times only (a sequence is not
        // rolled back): once failing its whole batch, once again when the batch is sent isolated.
        await flaky(`CREATE SEQUENCE $schema.flaky_once`);
        await flaky(`CREATE FUNCTION $schema.flaky() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.raw_body = convert_to('boom', 'UTF8') THEN
              RAISE EXCEPTION 'boom';
            ELSIF NEW.raw_body = convert_to('deadlock-once', 'UTF8') AND nextval('$schema.flaky_once') <= 2 THEN
              RAISE EXCEPTION 'simulated deadlock' USING ERRCODE = '40P01';
            END IF;
            RETURN NEW;
          END $$`);
        await flaky(
          `CREATE TRIGGER flaky BEFORE INSERT ON $schema.signals FOR EACH ROW EXECUTE FUNCTION $schema.flaky()`,
        );
      });

      afterAll(async () => {
        await flaky(`DROP TRIGGER flaky ON $schema.signals`);
      });

      it('rolls back that request alone, its quota charge and key included', async () => {
        const seeded = await seed(a, { quota: 10, agents: 1 });
        const requests = [
          request(seeded),
          request(seeded, { rawBody: 'boom', idempotencyKey: 'b', requestHash: 'h' }),
          // Goes through the isolated resend too, NUL and all.
          request(seeded, { rawBody: 'nul\u0000', verdict: accept({ ...BUY, comment: 'a\u0000b' }) }),
        ];
        const settled = await Promise.allSettled(requests.map((r) => a.ingest.commit(r)));
        expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
        expect(settled[1]!.status === 'rejected' && String(settled[1]!.reason)).toMatch(/boom/);
        // Refused by the server, so rolled back: a plain failure (500), not an unknown outcome.
        expect(settled[1]!.status === 'rejected' && settled[1]!.reason).not.toBeInstanceOf(OutcomeUnknownError);
        const used = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value.record.quota!.used] : []));
        expect(used).toEqual([1, 2]);
        expect((await a.usage.get(seeded.accountId, PERIOD))!.used).toBe(2);
        expect(await a.signals.get(requests[1]!.id)).toBeNull();
        expect(await a.signals.get(requests[2]!.id)).toMatchObject({
          rawBody: 'nul\u0000',
          signal: { comment: 'a\u0000b' },
        });
        // The key was not kept: a retry with it is a new request.
        const retry = await b.ingest.commit(request(seeded, { idempotencyKey: 'b', requestHash: 'h' }));
        expect(retry.kind).toBe('recorded');
        expect(retry.record.quota!.used).toBe(3);
        const taken = await a.deliveries.take(seeded.agents[0]!.id, at(2000), 10);
        expect(taken.map((d) => d.seq)).toEqual([1, 2, 3]);
      });

      it('sends a request rolled back by a deadlock again', async () => {
        const seeded = await seed(a, { quota: 10, agents: 1 });
        const requests = [request(seeded), request(seeded, { rawBody: 'deadlock-once' }), request(seeded)];
        const outcomes = await Promise.all(requests.map((r) => a.ingest.commit(r)));
        expect(outcomes.map((o) => o.record.status)).toEqual(['accepted', 'accepted', 'accepted']);
        // The retried request went in a later batch: it was charged last.
        expect(outcomes.map((o) => o.record.quota!.used)).toEqual([1, 3, 2]);
        expect((await a.usage.get(seeded.accountId, PERIOD))!.used).toBe(3);
        const taken = await a.deliveries.take(seeded.agents[0]!.id, at(2000), 10);
        expect(taken.map((d) => d.id)).toEqual([requests[0]!.id, requests[2]!.id, requests[1]!.id]);
      });
    });

    it('fails a batch whose connection is lost during the call as outcome unknown, and goes on with a new one', async () => {
      const seeded = await seed(a, { quota: 10 });
      // Holds the ingest inside the call: its insert waits for this lock.
      const locker = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await locker.connect();
      try {
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE "${target.schema}".signals IN ACCESS EXCLUSIVE MODE`);
        const lost = request(seeded);
        const pending = a.ingest.commit(lost).then(
          () => null,
          (error: unknown) => error,
        );
        await terminateSessionWaitingFor(`"${target.schema}".signals`);
        const error = await pending;
        expect(error).toBeInstanceOf(OutcomeUnknownError);
        await locker.query('ROLLBACK');
        // Terminated before its COMMIT, as it happens; the store could not have known that.
        expect(await a.signals.get(lost.id)).toBeNull();
      } finally {
        await locker.end();
      }
      const next = await a.ingest.commit(request(seeded));
      expect(next.record.status).toBe('accepted');
      expect((await a.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
    });

    it('fails alone a request holding what PostgreSQL text cannot store', async () => {
      const seeded = await seed(a, { quota: 10 });
      const settled = await Promise.allSettled([
        a.ingest.commit(request(seeded)),
        a.ingest.commit(request(seeded, { idempotencyKey: 'nul\u0000key', requestHash: 'h' })),
        a.ingest.commit(request(seeded, { contentType: 'text/plain; x=\ud800' })),
      ]);
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      // A lone surrogate is stored as U+FFFD, as a statement parameter would have stored it.
      expect(
        settled[2]!.status === 'fulfilled' && (await a.signals.get(settled[2]!.value.record.id))!.contentType,
      ).toBe('text/plain; x=\ufffd');
      expect((await a.usage.get(seeded.accountId, PERIOD))!.used).toBe(2);
    });

    it('tells listeners of one instance about deliveries committed by the other, and its own only once', async () => {
      const seeded = await seed(a, { agents: 1 });
      const agentId = seeded.agents[0]!.id;
      const heard: string[][] = [];
      const stop = a.deliveries.watch((ids) => {
        if (ids.includes(agentId)) heard.push(ids);
      });
      try {
        await a.deliveries.listening();
        await a.ingest.commit(request(seeded));
        expect(heard).toEqual([[agentId]]); // in-process, right after the commit
        await b.ingest.commit(request(seeded));
        await vi.waitFor(() => expect(heard.length).toBeGreaterThanOrEqual(2), { timeout: 10_000 });
        // Notifications arrive in commit order: had a's own NOTIFY not been skipped, it would be second.
        expect(heard).toEqual([[agentId], [agentId]]);
        expect(await a.deliveries.take(agentId, at(2000), 10)).toHaveLength(2);
      } finally {
        stop();
      }
    });

    it('keeps notifying after its listening connection is killed', async () => {
      const seeded = await seed(a, { agents: 1 });
      const agentId = seeded.agents[0]!.id;
      let heard = 0;
      const stop = a.deliveries.watch((ids) => {
        if (ids.includes(agentId)) heard++;
      });
      try {
        await a.deliveries.listening();
        const connections = a.deliveries.listenConnections;
        const killed = await query<{ killed: boolean }>(
          'SELECT pg_terminate_backend(pid) AS killed FROM pg_stat_activity WHERE application_name = $1',
          [`signalgate-listen ${target.schema}`.slice(0, 63)],
        );
        expect(killed.length).toBeGreaterThanOrEqual(1);
        // Committed while the listener may be down: the reconnect's catch-up reports it.
        await b.ingest.commit(request(seeded));
        await vi.waitFor(() => expect(heard).toBeGreaterThanOrEqual(1), { timeout: 10_000 });
        await vi.waitFor(() => expect(a.deliveries.listenConnections).toBeGreaterThan(connections), {
          timeout: 10_000,
        });
        // Reconnected and caught up: from here on only a NOTIFY can reach the listener.
        await a.deliveries.listening();
        const before = heard;
        await b.ingest.commit(request(seeded));
        await vi.waitFor(() => expect(heard).toBe(before + 1), { timeout: 10_000 });
      } finally {
        stop();
      }
    });
  });
});

/** Waits until a statement whose text holds `marker` waits for a row another transaction locked. */
async function waitUntilWaitingForRowLock(marker: string): Promise<void> {
  for (let tries = 0; tries < 400; tries++) {
    const waiting = await query<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND position($1 in query) > 0 AND pid <> pg_backend_pid()",
      [marker],
    );
    if (waiting[0]!.n > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`no statement with '${marker}' waited for a lock`);
}
