import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SignalStatus } from '../../src/store/records.js';
import type { IngestRequest, Store } from '../../src/store/store.js';
import {
  accept,
  at,
  BUY,
  contractStores,
  PERIOD,
  QUOTA_PROBLEM,
  request,
  seed,
  type Seeded,
  type StoreHarness,
} from './store-harness.js';

/** The store contract for repeats (idempotency keys, the duplicate guard), run unchanged against both implementations. */
describe.each(contractStores('contract_idempotency'))('$name store', ({ harness: makeHarness }) => {
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

  describe('idempotency keys', () => {
    it('answers a repeat with the original, without charging or delivering again', async () => {
      const seeded = await seed(store, { quota: 10, agents: 1 });
      const original = await store.ingest.commit(request(seeded, { idempotencyKey: 'retry-1', requestHash: 'h' }));
      const repeat = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'retry-1', requestHash: 'h', receivedAt: at(60_000) }),
      );
      expect(repeat).toEqual({ kind: 'replay', record: original.record });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
      expect(await store.deliveries.take(seeded.agents[0]!.id, at(61_000), 10)).toHaveLength(1);
      expect((await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals).toHaveLength(1);
    });

    it('replays a rejection just like an acceptance', async () => {
      const seeded = await seed(store);
      const verdict = {
        kind: 'reject' as const,
        httpStatus: 422,
        problems: [{ code: 'MISSING_SYMBOL' as const, detail: 'No symbol given.' }],
      };
      const original = await store.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'h', verdict }));
      const repeat = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'k', requestHash: 'h', verdict: accept() }),
      );
      expect(repeat).toEqual({ kind: 'replay', record: original.record });
    });

    it('does not bind a quota refusal to the key: the retry is evaluated afresh', async () => {
      const seeded = await seed(store, { quota: 1 });
      await store.ingest.commit(request(seeded));
      const refused = await store.ingest.commit(request(seeded, { idempotencyKey: 'q', requestHash: 'h' }));
      expect(refused.record).toMatchObject({ status: 'rejected', httpStatus: 429 });
      // Next period, the same retry is a new request and is accepted.
      const retry = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'q', requestHash: 'h', period: '2030-02', receivedAt: at(40 * 86_400_000) }),
      );
      expect(retry.kind).toBe('recorded');
      expect(retry.record.status).toBe('accepted');
      const again = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'q', requestHash: 'h', period: '2030-02' }),
      );
      expect(again).toEqual({ kind: 'replay', record: retry.record });
    });

    it('records a request that comes back with the key and another body as its own 422 entry, leaving the key bound', async () => {
      const seeded = await seed(store, { agents: 1 });
      const original = await store.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'body-a' }));
      const otherRequest = request(seeded, {
        idempotencyKey: 'k',
        requestHash: 'body-b',
        rawBody: 'GBPUSD,sell',
        receivedAt: at(2000),
      });
      const other = await store.ingest.commit(otherRequest);
      expect(other.kind).toBe('key_reused');
      expect(other.kind === 'key_reused' && other.originalId).toBe(original.record.id);
      expect(other.record).toEqual({
        id: otherRequest.id,
        sourceId: seeded.source.id,
        accountId: seeded.accountId,
        receivedAt: at(2000),
        status: 'rejected',
        httpStatus: 422,
        code: 'IDEMPOTENCY_KEY_REUSED',
        detail: expect.stringContaining(original.record.id),
        param: 'Idempotency-Key',
        errors: null,
        contentType: 'text/plain',
        rawBody: 'GBPUSD,sell',
        signal: null,
        idempotencyKey: 'k',
        quota: null,
        duplicateOf: null,
        outcome: null,
      });
      expect(await store.signals.get(otherRequest.id)).toEqual({ ...other.record, deliveries: [] });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
      expect((await store.deliveries.take(seeded.agents[0]!.id, at(3000), 10)).map((d) => d.id)).toEqual([
        original.record.id,
      ]);
      // The key stays with the original: its repeat is still a replay, another refusal is another entry.
      expect(await store.ingest.commit(request(seeded, { idempotencyKey: 'k', requestHash: 'body-a' }))).toEqual({
        kind: 'replay',
        // Its outcome as it is now: the delivery was handed out since.
        record: { ...original.record, outcome: { delivered: 1 } },
      });
      const third = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'k', requestHash: 'body-c', receivedAt: at(4000) }),
      );
      expect(third.kind).toBe('key_reused');
      expect(third.record.id).not.toBe(other.record.id);
      const log = (await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals;
      expect(log.map((s) => s.id)).toEqual([third.record.id, other.record.id, original.record.id]);
    });

    it('lets a new request take a key over once the original left the replay window', async () => {
      const seeded = await seed(store);
      const original = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'k', requestHash: 'h', receivedAt: at(0) }),
      );
      // Still inside the window when the original was received exactly at its start.
      const inside = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'k', requestHash: 'h', receivedAt: at(86_400_000), idempotencySince: at(0) }),
      );
      expect(inside.kind).toBe('replay');
      const later = request(seeded, {
        idempotencyKey: 'k',
        requestHash: 'h',
        receivedAt: at(86_400_001),
        idempotencySince: at(1),
      });
      const taken = await store.ingest.commit(later);
      expect(taken.kind).toBe('recorded');
      expect(taken.record.id).toBe(later.id);
      expect(taken.record.id).not.toBe(original.record.id);
      const again = await store.ingest.commit(
        request(seeded, { idempotencyKey: 'k', requestHash: 'h', receivedAt: at(86_400_002), idempotencySince: at(2) }),
      );
      expect(again).toEqual({ kind: 'replay', record: taken.record });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(2);
    });

    it('replays the record as stored, raw body bytes and all', async () => {
      const seeded = await seed(store);
      const rawBody = 'EURUSD,buy,comment="a\u0000b", ünïcødé 🚀 \\x00';
      const problems = [
        { code: 'UNKNOWN_PARAMETER' as const, detail: "unknown parameter 'c\u0000'", param: 'c' },
        { code: 'MISSING_ACTION' as const, detail: 'no action' },
      ];
      const original = await store.ingest.commit(
        request(seeded, {
          rawBody,
          idempotencyKey: 'k',
          requestHash: 'h',
          verdict: { kind: 'reject', httpStatus: 422, problems },
        }),
      );
      const stored = await store.signals.get(original.record.id);
      const { deliveries, ...record } = stored!;
      expect(deliveries).toEqual([]);
      expect(record.rawBody).toBe(rawBody);
      const repeat = await store.ingest.commit(request(seeded, { rawBody, idempotencyKey: 'k', requestHash: 'h' }));
      expect(repeat).toEqual({ kind: 'replay', record });
      const accepted = await store.ingest.commit(
        request(seeded, {
          rawBody,
          idempotencyKey: 'k2',
          requestHash: 'h',
          verdict: accept({ ...BUY, comment: 'x\u0000y 🚀' }),
        }),
      );
      const again = await store.ingest.commit(request(seeded, { rawBody, idempotencyKey: 'k2', requestHash: 'h' }));
      expect(again).toEqual({ kind: 'replay', record: accepted.record });
    });

    it('frees the key of a quota refusal for the next request with that key in the same turn', async () => {
      const seeded = await seed(store, { quota: 1 });
      const outcomes = await Promise.all([
        store.ingest.commit(request(seeded)),
        store.ingest.commit(request(seeded, { idempotencyKey: 'q', requestHash: 'h' })),
        store.ingest.commit(request(seeded, { idempotencyKey: 'q', requestHash: 'h' })),
      ]);
      expect(outcomes.map((o) => [o.kind, o.record.httpStatus])).toEqual([
        ['recorded', 202],
        ['recorded', 429],
        ['recorded', 429],
      ]);
      expect(outcomes[2]!.record.id).not.toBe(outcomes[1]!.record.id);
    });

    it('scopes keys to their source', async () => {
      const a = await seed(store);
      const b = await seed(store);
      expect((await store.ingest.commit(request(a, { idempotencyKey: 'same', requestHash: 'h' }))).kind).toBe(
        'recorded',
      );
      expect((await store.ingest.commit(request(b, { idempotencyKey: 'same', requestHash: 'h' }))).kind).toBe(
        'recorded',
      );
    });

    it('records exactly one signal when the same key arrives 30 times at once', async () => {
      const seeded = await seed(store, { quota: 100, agents: 1 });
      const outcomes = await Promise.all(
        Array.from({ length: 30 }, () =>
          store.ingest.commit(request(seeded, { idempotencyKey: 'burst', requestHash: 'h' })),
        ),
      );
      const recorded = outcomes.filter((o) => o.kind === 'recorded');
      expect(recorded).toHaveLength(1);
      expect(outcomes.filter((o) => o.kind === 'replay')).toHaveLength(29);
      expect(outcomes.every((o) => o.record.id === recorded[0]!.record.id)).toBe(true);
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
      expect((await store.signals.list({ sourceId: seeded.source.id, limit: 100 })).signals).toHaveLength(1);
      expect(await store.deliveries.take(seeded.agents[0]!.id, at(2000), 100)).toHaveLength(1);
    });
  });

  describe('duplicate guard', () => {
    const digest = (body: string) => createHash('sha256').update(body).digest('hex');
    const guarded = (seeded: Seeded, receivedMs: number, body = 'EURUSD,buy,vol=0.1', window = 60_000): IngestRequest =>
      request(seeded, {
        receivedAt: at(receivedMs),
        rawBody: body,
        duplicateCheck: { bodyDigest: digest(body), since: at(receivedMs - window) },
      });

    it('logs a repeated body within the window as a duplicate of the first: answered as it, neither charged nor delivered', async () => {
      const seeded = await seed(store, { quota: 1000, agents: 1 });
      const first = await store.ingest.commit(guarded(seeded, 900_000));
      expect(first.kind).toBe('recorded');
      const again = await store.ingest.commit(guarded(seeded, 930_000));
      expect(again.kind).toBe('duplicate');
      if (again.kind !== 'duplicate') return;
      expect(again.original).toEqual(first.record);
      expect(again.record).toMatchObject({
        status: 'duplicate',
        httpStatus: 202,
        duplicateOf: first.record.id,
        quota: null,
        outcome: null,
        signal: BUY,
      });
      expect(await store.signals.get(again.record.id)).toEqual({ ...again.record, deliveries: [] });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
      expect((await store.deliveries.take(seeded.agents[0]!.id, at(931_000), 10)).map((d) => d.id)).toEqual([
        first.record.id,
      ]);
      const statuses = async (status: SignalStatus) =>
        (await store.signals.list({ sourceId: seeded.source.id, status, limit: 10 })).signals.map((s) => s.id);
      expect(await statuses('duplicate')).toEqual([again.record.id]);
      expect(await statuses('accepted')).toEqual([first.record.id]);

      // Another body is a new signal; the same body past the window is one too, and starts a new window.
      expect((await store.ingest.commit(guarded(seeded, 935_000, 'EURUSD,sell,vol=0.1'))).kind).toBe('recorded');
      const later = await store.ingest.commit(guarded(seeded, 961_000));
      expect(later.kind).toBe('recorded');
      expect(await store.ingest.commit(guarded(seeded, 962_000))).toMatchObject({
        kind: 'duplicate',
        original: { id: later.record.id },
      });
      // Without the check (guard off) the same body is a new signal.
      expect((await store.ingest.commit(request(seeded, { receivedAt: at(963_000) }))).kind).toBe('recorded');
    });

    it("compares with the source's previous accepted signal only; a request that cannot be a repeat (since null) is never held back, and is what the next compares with", async () => {
      const seeded = await seed(store, { quota: 1000 });
      const close = (receivedMs: number): IngestRequest =>
        request(seeded, {
          receivedAt: at(receivedMs),
          rawBody: 'EURUSD,closeall',
          duplicateCheck: { bodyDigest: digest('EURUSD,closeall'), since: null },
        });
      const kinds: string[] = [];
      for (const next of [
        guarded(seeded, 1_050_000),
        close(1_050_001),
        close(1_050_002),
        guarded(seeded, 1_050_003),
        close(1_050_004),
        guarded(seeded, 1_050_005),
        guarded(seeded, 1_050_006),
      ]) {
        kinds.push((await store.ingest.commit(next)).kind);
      }
      expect(kinds).toEqual(['recorded', 'recorded', 'recorded', 'recorded', 'recorded', 'recorded', 'duplicate']);
    });

    it('compares only with signals accepted on the same source', async () => {
      const a = await seed(store, { quota: 1 });
      const b = await seed(store, { quota: 1000 });
      expect((await store.ingest.commit(guarded(a, 1_000_000))).record.status).toBe('accepted');
      // The quota refusal is not an accepted signal: no duplicate of it.
      const refused = await store.ingest.commit(guarded(a, 1_000_001, 'EURUSD,sell'));
      expect(refused.record).toMatchObject({ status: 'rejected', httpStatus: 429 });
      expect((await store.ingest.commit(guarded(b, 1_000_002, 'EURUSD,sell'))).kind).toBe('recorded');
      expect((await store.ingest.commit(guarded(b, 1_000_003))).kind).toBe('recorded');
    });

    it('binds an Idempotency-Key sent with a duplicate to the original', async () => {
      const seeded = await seed(store, { quota: 1000 });
      const first = await store.ingest.commit(guarded(seeded, 1_100_000));
      const keyed = { ...guarded(seeded, 1_100_010), idempotencyKey: 'dk', requestHash: 'dh' };
      expect((await store.ingest.commit(keyed)).kind).toBe('duplicate');
      const retry = await store.ingest.commit({
        ...guarded(seeded, 1_100_020),
        idempotencyKey: 'dk',
        requestHash: 'dh',
      });
      expect(retry).toMatchObject({ kind: 'replay', record: { id: first.record.id } });
    });

    it('logs a repeated body as a duplicate of an earlier request of the same turn, between plain, keyed and rejected ones', async () => {
      const seeded = await seed(store, { quota: 1000, agents: 1 });
      const requests = [
        guarded(seeded, 1_200_000),
        request(seeded, { receivedAt: at(1_200_001) }),
        request(seeded, { receivedAt: at(1_200_002), idempotencyKey: 'turn', requestHash: 'th' }),
        request(seeded, {
          receivedAt: at(1_200_003),
          verdict: { kind: 'reject', httpStatus: 422, problems: [QUOTA_PROBLEM] },
        }),
        guarded(seeded, 1_200_004),
        request(seeded, { receivedAt: at(1_200_005) }),
      ];
      // Submitted in one event-loop turn: one batch on both stores.
      const outcomes = await Promise.all(requests.map((r) => store.ingest.commit(r)));
      expect(outcomes.map((o) => o.kind)).toEqual([
        'recorded',
        'recorded',
        'recorded',
        'recorded',
        'duplicate',
        'recorded',
      ]);
      // The original as stored, its delivery counted.
      expect(outcomes[4]).toMatchObject({ original: { id: requests[0]!.id, outcome: { queued: 1 } } });
      expect(outcomes.map((o) => o.record.quota?.used ?? null)).toEqual([1, 2, 3, null, null, 4]);
      for (const i of [0, 1, 2, 3, 5]) {
        const { deliveries: _d, ...stored } = (await store.signals.get(requests[i]!.id))!;
        expect(stored).toEqual(outcomes[i]!.record);
      }
      const taken = await store.deliveries.take(seeded.agents[0]!.id, at(1_300_000), 10);
      expect(taken.map((d) => [d.id, d.seq])).toEqual([0, 1, 2, 5].map((i, k) => [requests[i]!.id, k + 1]));
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(4);
    });

    it('accepts one of many identical requests racing from two store instances', async () => {
      const seeded = await seed(store, { quota: 1000, agents: 1 });
      const other = await harness.open();
      try {
        const outcomes = await Promise.all(
          Array.from({ length: 30 }, (_, i) =>
            (i % 2 === 0 ? store : other).ingest.commit(guarded(seeded, 1_200_000 + (i % 3))),
          ),
        );
        const recorded = outcomes.filter((o) => o.kind === 'recorded');
        expect(recorded).toHaveLength(1);
        expect(
          outcomes
            .filter((o) => o.kind === 'duplicate')
            .every((o) => o.kind === 'duplicate' && o.original.id === recorded[0]!.record.id),
        ).toBe(true);
        expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(1);
        expect(await store.deliveries.take(seeded.agents[0]!.id, at(1_200_500), 100)).toHaveLength(1);
      } finally {
        await other.close();
      }
    });
  });
});
