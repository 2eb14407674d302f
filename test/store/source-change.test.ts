import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { answerInbound } from '../../src/inbound/answer-inbound.js';
import type { InboundRequest } from '../../src/inbound/inbound-request.js';
import { ingestItem, type IngestAnswer } from '../../src/store/postgres/ingest-call.js';
import { SourceChangedError } from '../../src/store/source-changed.js';
import type { Store } from '../../src/store/store.js';
import { TEST_DATABASE_URL } from '../support/postgres.js';
import { at, PERIOD, postgresHarness, request, seed, sqliteHarness, type StoreHarness } from './store-harness.js';

/** A text signal for `authKey`, as the HTTP edge hands it over. */
function inboundRequest(authKey: string): InboundRequest {
  return {
    authKey,
    receivedAtMillis: Date.now(),
    contentType: 'text/plain',
    contentEncoding: undefined,
    body: Buffer.from('EURUSD,buy,vol=0.1'),
    bodyTooLarge: false,
    signature: { signature: undefined, secret: undefined, querySecret: false },
    clientAddress: '127.0.0.1',
    idempotencyKey: undefined,
  };
}

/**
 * A change of a source and the requests checked against it: a request is committed only while
 * its source still has the revision its checks saw, on both stores.
 */
describe.each([
  { name: 'sqlite', harness: () => sqliteHarness() },
  { name: 'postgres', harness: () => postgresHarness('source_change') },
])('$name store', ({ harness: makeHarness }) => {
  let harness: StoreHarness;
  let store: Store;

  beforeAll(async () => {
    harness = await makeHarness();
    store = await harness.open();
  });

  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  it('counts a revision per change of the source', async () => {
    const { source, authKey } = await seed(store);
    expect(source.revision).toBe(0);
    expect((await store.sources.update(source.id, { active: false }, new Date().toISOString()))!.revision).toBe(1);
    expect(
      (await store.sources.update(source.id, { maxSignalAgeSeconds: 5 }, new Date().toISOString()))!.revision,
    ).toBe(2);
    expect((await store.sources.findByAuthKey(authKey))!.revision).toBe(2);
  });

  it('records nothing for a request checked against an earlier revision, and the rest of its batch as usual', async () => {
    const seeded = await seed(store, { agents: 1 });
    const other = await seed(store, { agents: 1 });
    await store.sources.update(seeded.source.id, { active: false }, new Date().toISOString());

    // Submitted together, so on the embedded store they share one batch.
    const [stale, fine] = await Promise.allSettled([
      store.ingest.commit(request(seeded)),
      store.ingest.commit(request(other)),
    ]);
    expect(stale.status === 'rejected' && stale.reason).toBeInstanceOf(SourceChangedError);
    expect(fine.status === 'fulfilled' && fine.value.kind).toBe('recorded');

    expect((await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals).toEqual([]);
    expect(await store.usage.get(seeded.accountId, PERIOD)).toMatchObject({ used: 0 });
    expect(await store.deliveries.take(seeded.agents[0]!.id, at(2000), 10)).toEqual([]);
    expect(await store.usage.get(other.accountId, PERIOD)).toMatchObject({ used: 1 });

    const current = await store.ingest.commit(request(seeded, { sourceRevision: 1 }));
    expect(current.kind).toBe('recorded');
  });

  it('checks a request again when its source was deactivated after the checks, and refuses it', async () => {
    const seeded = await seed(store, { agents: 1 });
    // A second connection to the same data, as the admin API's is beside the inbound one.
    const admin = await harness.open();
    try {
      // The inbound side has seen the source active; the change commits on the other
      // connection within the same turn, before the request reaches the store.
      expect((await store.sources.findByAuthKey(seeded.authKey))!.active).toBe(true);
      await admin.sources.update(seeded.source.id, { active: false }, new Date().toISOString());
      const answer = await answerInbound(store, inboundRequest(seeded.authKey));

      expect(answer.status).toBe(401);
      expect(JSON.parse(answer.body)).toMatchObject({ status: 401, code: 'SOURCE_INACTIVE' });
      const log = (await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals;
      expect(log.map((s) => [s.status, s.code])).toEqual([['rejected', 'SOURCE_INACTIVE']]);
      expect(await store.deliveries.take(seeded.agents[0]!.id, at(2000), 10)).toEqual([]);
    } finally {
      await admin.close();
    }
  });
});

describe('postgres: a change of the source in progress', () => {
  let harness: Awaited<ReturnType<typeof postgresHarness>>;
  let store: Store;

  beforeAll(async () => {
    harness = await postgresHarness('source_lock');
    store = await harness.open();
  });

  afterAll(async () => {
    await store?.close();
    await harness?.dispose();
  });

  it('holds back an ingest of that source until it commits; the ingest then sees the new revision', async () => {
    const seeded = await seed(store, { agents: 1 });
    const change = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await change.connect();
    try {
      await change.query(`SET search_path TO "${harness.schema}"`);
      await change.query('BEGIN');
      // What sources.update does: lock the row for update, then write the next revision.
      await change.query('SELECT * FROM sources WHERE id = $1 FOR UPDATE', [seeded.source.id]);
      await change.query('UPDATE sources SET active = false, revision = revision + 1 WHERE id = $1', [
        seeded.source.id,
      ]);
      const changePid = (await change.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;

      const pending = store.ingest.commit(request(seeded));
      const outcome = pending.then(
        () => 'recorded',
        (error: unknown) => error,
      );
      // The ingest's session waits on the change's lock before the change commits.
      let blocked = 0;
      for (let tries = 0; tries < 400 && blocked === 0; tries++) {
        if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 25));
        const { rows } = await change.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY (pg_blocking_pids(pid))',
          [changePid],
        );
        blocked = rows[0]!.n;
      }
      expect(blocked).toBe(1);
      await change.query('COMMIT');

      expect(await outcome).toBeInstanceOf(SourceChangedError);
      expect((await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals).toEqual([]);
      expect(await store.usage.get(seeded.accountId, PERIOD)).toMatchObject({ used: 0 });
    } finally {
      await change.end();
    }
  });

  it('still ingests for an instance started before the revision existed (its items carry none)', async () => {
    const seeded = await seed(store, { agents: 1 });
    await store.sources.update(seeded.source.id, { name: 'renamed' }, new Date().toISOString());
    const { source_revision: _omitted, ...item } = ingestItem(request(seeded), 0);
    const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await client.connect();
    try {
      await client.query(`SET search_path TO "${harness.schema}"`);
      const { rows } = await client.query<{ r: IngestAnswer[] }>('SELECT signalgate_ingest($1, $2, $3, false) AS r', [
        JSON.stringify([item]),
        harness.schema,
        'an-older-instance',
      ]);
      expect(rows[0]!.r).toEqual([expect.objectContaining({ n: 0, ok: true, kind: 'recorded', charged: true })]);
    } finally {
      await client.end();
    }
    expect((await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals).toHaveLength(1);
  });
});
