import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedSignal } from '../../src/language/index.js';
import { storedAuthKey } from '../../src/store/auth-key-hash.js';
import type { ExpiredDelivery } from '../../src/store/records.js';
import type { SignalFilter, Store } from '../../src/store/store.js';
import { accept, at, BUY, contractStores, request, seed, type StoreHarness } from './store-harness.js';

/** The store contract for the signal log, run unchanged against both implementations. */
describe.each(contractStores('contract_signal_log'))('$name store', ({ harness: makeHarness }) => {
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

  describe('signal log', () => {
    it('lists newest first, pages with a cursor and filters by source and status', async () => {
      const a = await seed(store, { quota: 1000 });
      const b = await seed(store, { quota: 1000 });
      const reject = {
        kind: 'reject' as const,
        httpStatus: 422,
        problems: [{ code: 'MISSING_ACTION' as const, detail: 'x' }],
      };
      const made: { id: string; source: string; status: string }[] = [];
      for (let i = 0; i < 12; i++) {
        const seeded = i % 3 === 0 ? b : a;
        // Two signals share each receivedAt so the id decides their order.
        const r = request(seeded, {
          id: `sig-${String(i).padStart(2, '0')}-${randomUUID()}`,
          receivedAt: at(500_000 + Math.floor(i / 2)),
          verdict: i % 4 === 1 ? reject : accept(),
        });
        const outcome = await store.ingest.commit(r);
        made.push({ id: r.id, source: seeded.source.id, status: outcome.record.status });
      }
      const newestFirst = [...made].reverse();
      const ofA = newestFirst.filter((m) => m.source === a.source.id);

      const page1 = await store.signals.list({ sourceId: a.source.id, limit: 3 });
      expect(page1.signals.map((s) => s.id)).toEqual(ofA.slice(0, 3).map((m) => m.id));
      expect(page1.next).toBe(page1.signals[2]!.id);
      const page2 = await store.signals.list({ sourceId: a.source.id, limit: 3, before: page1.next! });
      expect(page2.signals.map((s) => s.id)).toEqual(ofA.slice(3, 6).map((m) => m.id));
      expect(page2.next).toBe(page2.signals[2]!.id);
      const page3 = await store.signals.list({ sourceId: a.source.id, limit: 3, before: page2.next! });
      expect(page3.signals.map((s) => s.id)).toEqual(ofA.slice(6, 9).map((m) => m.id));
      expect(page3.next).toBeNull();
      expect(ofA).toHaveLength(8);
      // A last page that is exactly full has no next page either.
      expect(await store.signals.list({ sourceId: a.source.id, limit: 2, before: page2.next! })).toEqual({
        signals: page3.signals,
        next: null,
      });
      expect((await store.signals.list({ sourceId: a.source.id, limit: 8 })).next).toBeNull();
      expect((await store.signals.list({ sourceId: a.source.id, limit: 7 })).next).toBe(ofA[6]!.id);

      const rejectedOfA = (await store.signals.list({ sourceId: a.source.id, status: 'rejected', limit: 10 })).signals;
      expect(rejectedOfA.map((s) => s.id)).toEqual(ofA.filter((m) => m.status === 'rejected').map((m) => m.id));
      expect(rejectedOfA.length).toBeGreaterThan(0);

      const ofB = (await store.signals.list({ sourceId: b.source.id, limit: 10 })).signals;
      expect(ofB.map((s) => s.id)).toEqual(newestFirst.filter((m) => m.source === b.source.id).map((m) => m.id));

      expect((await store.signals.list({ limit: 10, before: 'sig-unknown' })).signals).toEqual([]);
      // Without a source filter the log spans sources (and earlier tests' signals).
      const everything = (await store.signals.list({ limit: 1000 })).signals;
      const positions = made.map((m) => everything.findIndex((s) => s.id === m.id));
      expect(positions.every((p) => p >= 0)).toBe(true);
      expect([...positions].sort((x, y) => y - x)).toEqual(positions);
      expect(await store.signals.get('sig-unknown')).toBeNull();
    });
  });

  describe('outcomes', () => {
    const SELL: NormalizedSignal = { symbol: 'GBPUSD', action: 'sell', volume: { type: 'lots', value: 0.2 } };
    const ok = (status: 'executed' | 'rejected' | 'failed', message: string | null = null) => ({
      status,
      message,
      result: null,
    });

    it("counts each signal's deliveries by status, on the list, the detail and a replay; {} with no agent, null when rejected", async () => {
      const seeded = await seed(store, { quota: 1000, agents: 2 });
      const [one, two] = seeded.agents.map((agent) => agent.id).sort() as [string, string];
      const first = await store.ingest.commit(
        request(seeded, {
          receivedAt: at(600_000),
          idempotencyKey: 'o1',
          requestHash: 'h',
          verdict: accept(BUY, at(600_030)),
        }),
      );
      expect(first.record.outcome).toEqual({ queued: 2 });
      // Agent one takes and executes it; agent two comes back after its deadline.
      expect((await store.deliveries.take(one, at(600_010), 10)).map((d) => d.id)).toEqual([first.record.id]);
      await store.deliveries.ack(one, first.record.id, ok('executed', 'filled at 1.1'), at(600_011));
      const expired: ExpiredDelivery[] = [];
      const stop = store.deliveries.watchExpiries((found) => expired.push(...found));
      expect(await store.deliveries.take(two, at(600_045), 10)).toEqual([]);
      stop();
      expect(expired).toEqual([
        {
          signalId: first.record.id,
          agentId: two,
          receivedAt: at(600_000),
          expiresAt: at(600_030),
          expiredAt: at(600_045),
        },
      ]);

      const detail = await store.signals.get(first.record.id);
      expect(detail!.outcome).toEqual({ executed: 1, expired: 1 });
      expect(detail!.deliveries.map((d) => [d.agentId, d.status, d.attempts, d.message])).toEqual([
        [one, 'executed', 1, 'filled at 1.1'],
        [two, 'expired', 0, null],
      ]);
      const listed = (await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals;
      expect(listed.map((s) => s.outcome)).toEqual([{ executed: 1, expired: 1 }]);
      const replay = await store.ingest.commit(
        request(seeded, { receivedAt: at(600_050), idempotencyKey: 'o1', requestHash: 'h' }),
      );
      expect(replay).toMatchObject({
        kind: 'replay',
        record: { id: first.record.id, outcome: { executed: 1, expired: 1 } },
      });

      const nobody = await seed(store, { quota: 1000, agents: 0 });
      const lonely = await store.ingest.commit(request(nobody));
      expect(lonely.record.outcome).toEqual({});
      expect((await store.signals.get(lonely.record.id))!.outcome).toEqual({});
      const refused = await store.ingest.commit(
        request(nobody, {
          receivedAt: at(2000),
          verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: 'MISSING_ACTION', detail: 'x' }] },
        }),
      );
      expect(refused.record.outcome).toBeNull();
      expect(
        (await store.signals.list({ sourceId: nobody.source.id, limit: 10 })).signals.map((s) => s.outcome),
      ).toEqual([null, {}]);
    });

    it('filters by outcome, symbol and status, alone and together, paging in log order', async () => {
      const seeded = await seed(store, { quota: 1000, agents: 2 });
      const [one, two] = seeded.agents.map((agent) => agent.id).sort() as [string, string];
      const made: { id: string; symbol: string; outcome: string[] }[] = [];
      for (let i = 0; i < 9; i++) {
        const signal = i % 2 === 0 ? BUY : SELL;
        const r = request(seeded, {
          id: `sig-o${i}-${randomUUID()}`,
          receivedAt: at(700_000 + i),
          verdict: accept(signal, at(800_000)),
        });
        await store.ingest.commit(r);
        made.push({ id: r.id, symbol: signal.symbol, outcome: [] });
      }
      // Both agents take everything; agent one executes signals 0-5, rejects 6-8; agent two
      // executes 0-2 and rejects 3, leaving the rest delivered.
      await store.deliveries.take(one, at(710_000), 100);
      await store.deliveries.take(two, at(710_000), 100);
      for (const [i, m] of made.entries()) {
        await store.deliveries.ack(one, m.id, ok(i < 6 ? 'executed' : 'rejected', 'x'), at(720_000));
        if (i < 3) await store.deliveries.ack(two, m.id, ok('executed'), at(720_000));
        if (i === 3) await store.deliveries.ack(two, m.id, ok('rejected', 'no margin'), at(720_000));
      }
      await store.ingest.commit(
        request(seeded, {
          receivedAt: at(700_100),
          verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: 'MISSING_ACTION', detail: 'x' }] },
        }),
      );
      const ids = (filter: Partial<SignalFilter>) =>
        store.signals
          .list({ sourceId: seeded.source.id, limit: 100, ...filter })
          .then((page) => page.signals.map((s) => s.id));
      const newest = (pick: (i: number) => boolean) =>
        made
          .filter((_, i) => pick(i))
          .map((m) => m.id)
          .reverse();

      expect(await ids({ outcome: 'executed' })).toEqual(newest((i) => i < 6));
      expect(await ids({ outcome: 'rejected' })).toEqual(newest((i) => i === 3 || i >= 6));
      expect(await ids({ outcome: 'delivered' })).toEqual(newest((i) => i >= 4));
      expect(await ids({ outcome: 'failed' })).toEqual([]);
      expect(await ids({ outcome: 'rejected', symbol: 'EURUSD' })).toEqual(newest((i) => i >= 6 && i % 2 === 0));
      expect(await ids({ symbol: 'GBPUSD' })).toEqual(newest((i) => i % 2 === 1));
      expect(await ids({ symbol: 'USDJPY' })).toEqual([]);
      expect(await ids({ status: 'accepted' })).toEqual(newest(() => true));
      expect(
        (await store.signals.list({ sourceId: seeded.source.id, status: 'rejected', limit: 100 })).signals,
      ).toHaveLength(1);
      expect(await ids({ outcome: 'executed', status: 'rejected' })).toEqual([]);
      // A symbol with an outcome across every source (the other tests' signals left out): each
      // signal once, though 0 and 2 have two executed deliveries.
      const mine = new Set(made.map((m) => m.id));
      const everySource = async (filter: Partial<SignalFilter>) =>
        (await store.signals.list({ limit: 500, ...filter })).signals.map((s) => s.id).filter((id) => mine.has(id));
      expect(await everySource({ outcome: 'executed', symbol: 'EURUSD' })).toEqual(newest((i) => i < 6 && i % 2 === 0));
      expect(await everySource({ outcome: 'rejected', symbol: 'GBPUSD' })).toEqual(
        newest((i) => (i === 3 || i >= 6) && i % 2 === 1),
      );

      // Paging with the outcome filter: a signal with two executed deliveries is listed once.
      const executed = newest((i) => i < 6);
      const page1 = await store.signals.list({ sourceId: seeded.source.id, outcome: 'executed', limit: 4 });
      expect(page1.signals.map((s) => s.id)).toEqual(executed.slice(0, 4));
      expect(page1.signals.map((s) => s.outcome)).toEqual([
        { executed: 1, delivered: 1 },
        { executed: 1, delivered: 1 },
        { executed: 1, rejected: 1 },
        { executed: 2 },
      ]);
      const page2 = await store.signals.list({
        sourceId: seeded.source.id,
        outcome: 'executed',
        limit: 4,
        before: page1.next!,
      });
      expect(page2.signals.map((s) => s.id)).toEqual(executed.slice(4));
      expect(page2.next).toBeNull();
    });
  });

  describe('daily counts and symbols', () => {
    it("counts an account's signals per UTC day, accepted and rejected apart, within the days asked", async () => {
      const seeded = await seed(store, { quota: 1000 });
      const other = await seed(store, { quota: 1000 });
      const reject = {
        kind: 'reject' as const,
        httpStatus: 422,
        problems: [{ code: 'MISSING_ACTION' as const, detail: 'x' }],
      };
      const day = 86_400_000;
      // T0 is 12:00 UTC: -12 h is the day's first millisecond, +12 h - 1 its last.
      const times = [-12 * 3600_000, 12 * 3600_000 - 1, day, day, 3 * day];
      for (const [i, t] of times.entries()) {
        await store.ingest.commit(
          request(seeded, { receivedAt: at(t), verdict: i === 1 || i === 3 ? reject : accept() }),
        );
      }
      await store.ingest.commit(request(other, { receivedAt: at(0) }));
      const d = (offset: number) => at(offset * day).slice(0, 10);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(2))).toEqual([
        { day: d(0), accepted: 1, rejected: 1 },
        { day: d(1), accepted: 1, rejected: 1 },
      ]);
      expect(await store.signals.countPerDay(seeded.accountId, d(3), d(3))).toEqual([
        { day: d(3), accepted: 1, rejected: 0 },
      ]);
      expect(await store.signals.countPerDay(seeded.accountId, d(-5), d(-1))).toEqual([]);
    });

    it('keeps the per-day counts equal to the log: batches, key reuse, duplicates, quota refusals, pruning and a removed source', async () => {
      const seeded = await seed(store, { quota: 5, agents: 0 });
      const other = await seed(store, { quota: 5, agents: 0 });
      const reject = {
        kind: 'reject' as const,
        httpStatus: 422,
        problems: [{ code: 'MISSING_ACTION' as const, detail: 'x' }],
      };
      const day = 86_400_000;
      const d = (offset: number) => at(offset * day).slice(0, 10);
      const digest = createHash('sha256').update('EURUSD,buy,vol=0.1').digest('hex');
      // Day 0: an accepted entry holding a key, the key reused (a rejection), then one batch of
      // three accepts and a rejection.
      expect(
        (await store.ingest.commit(request(seeded, { receivedAt: at(0), idempotencyKey: 'k', requestHash: 'a' }))).kind,
      ).toBe('recorded');
      expect(
        (await store.ingest.commit(request(seeded, { receivedAt: at(1), idempotencyKey: 'k', requestHash: 'b' }))).kind,
      ).toBe('key_reused');
      await Promise.all([
        ...[2, 3, 4].map((t) => store.ingest.commit(request(seeded, { receivedAt: at(t) }))),
        store.ingest.commit(request(seeded, { receivedAt: at(5), verdict: reject })),
        store.ingest.commit(request(other, { receivedAt: at(6) })),
      ]);
      // Day 1: an accept, its duplicate (neither), and a quota refusal (the quota of 5 is used up).
      const guard = { bodyDigest: digest, since: at(day - 60_000) };
      expect((await store.ingest.commit(request(seeded, { receivedAt: at(day), duplicateCheck: guard }))).kind).toBe(
        'recorded',
      );
      expect(
        (await store.ingest.commit(request(seeded, { receivedAt: at(day + 1), duplicateCheck: guard }))).kind,
      ).toBe('duplicate');
      const refused = await store.ingest.commit(request(seeded, { receivedAt: at(day + 2) }));
      expect(refused.kind === 'recorded' && refused.record.httpStatus).toBe(429);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(1))).toEqual([
        { day: d(0), accepted: 4, rejected: 2 },
        { day: d(1), accepted: 1, rejected: 1 },
      ]);
      expect(await store.signals.countPerDay(other.accountId, d(0), d(1))).toEqual([
        { day: d(0), accepted: 1, rejected: 0 },
      ]);

      // Retention takes day 0 but the entry its key still holds; then that one too.
      await store.retention.pruneSignals(at(day), 1000);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(1))).toEqual([
        { day: d(0), accepted: 1, rejected: 0 },
        { day: d(1), accepted: 1, rejected: 1 },
      ]);
      expect(await store.signals.countPerDay(other.accountId, d(0), d(1))).toEqual([]);
      await store.retention.pruneIdempotencyKeys(at(day), 1000);
      await store.retention.pruneSignals(at(day), 1000);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(1))).toEqual([
        { day: d(1), accepted: 1, rejected: 1 },
      ]);

      // A second source's rejection stays when the first source goes with its log.
      const second = { ...seeded.source, id: `src-2-${randomUUID()}`, ...storedAuthKey(`key-${randomUUID()}`) };
      await store.sources.create(second);
      await store.ingest.commit(request({ ...seeded, source: second }, { receivedAt: at(day + 3), verdict: reject }));
      expect(await store.sources.delete(seeded.source.id)).toBe(true);
      expect(await store.signals.countPerDay(seeded.accountId, d(0), d(1))).toEqual([
        { day: d(1), accepted: 0, rejected: 1 },
      ]);
    });

    it('filters the signal log by symbol, newest first, a page at a time', async () => {
      const seeded = await seed(store, { quota: 1000 });
      const gold = `XAU${randomUUID().slice(0, 8).toUpperCase()}`;
      const made: string[] = [];
      for (let i = 0; i < 5; i++) {
        const symbol = i % 2 === 0 ? gold : 'EURUSD';
        // A comment with an escaped NUL must not keep the symbol from being read.
        const r = request(seeded, {
          receivedAt: at(700_000 + i),
          verdict: accept({ ...BUY, symbol, ...(i === 4 && { comment: 'a\u0000b' }) }),
        });
        await store.ingest.commit(r);
        if (symbol === gold) made.push(r.id);
      }
      const newestFirst = made.reverse();
      const page = await store.signals.list({ symbol: gold, limit: 2 });
      expect(page.signals.map((s) => s.id)).toEqual(newestFirst.slice(0, 2));
      expect(
        (await store.signals.list({ symbol: gold, limit: 2, before: page.next! })).signals.map((s) => s.id),
      ).toEqual(newestFirst.slice(2));
      expect(
        (await store.signals.list({ symbol: gold, sourceId: seeded.source.id, status: 'accepted', limit: 10 })).signals,
      ).toHaveLength(3);
      expect((await store.signals.list({ symbol: gold.toLowerCase(), limit: 10 })).signals).toEqual([]);
    });
  });
});
