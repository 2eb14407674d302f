import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Problem } from '../../src/errors/catalog.js';
import { storedAuthKey } from '../../src/store/auth-key-hash.js';
import type { Store } from '../../src/store/store.js';
import {
  accept,
  at,
  BUY,
  contractStores,
  PERIOD,
  QUOTA_PROBLEM,
  request,
  seed,
  type StoreHarness,
} from './store-harness.js';

/** The store contract for the ingest (recording, charging, routing), run unchanged against both implementations. */
describe.each(contractStores('contract_ingest'))('$name store', ({ harness: makeHarness }) => {
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

  describe('ingest', () => {
    it('records an accepted signal as accepted, with outcome {queued: N}, charges the quota and queues one delivery per agent', async () => {
      const seeded = await seed(store, { quota: 10, agents: 2 });
      const req = request(seeded, { idempotencyKey: 'k1', requestHash: 'h1' });
      const outcome = await store.ingest.commit(req);
      expect(outcome.kind).toBe('recorded');
      expect(outcome.record).toEqual({
        id: req.id,
        sourceId: seeded.source.id,
        accountId: seeded.accountId,
        receivedAt: req.receivedAt,
        status: 'accepted',
        httpStatus: 202,
        code: null,
        detail: null,
        param: null,
        errors: null,
        contentType: 'text/plain',
        rawBody: req.rawBody,
        signal: BUY,
        idempotencyKey: 'k1',
        quota: { period: PERIOD, used: 1, limit: 10 },
        duplicateOf: null,
        outcome: { queued: 2 },
      });
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 1, limit: 10 });

      const stored = await store.signals.get(req.id);
      expect(stored).toMatchObject(outcome.record);
      const agentIds = seeded.agents.map((a) => a.id).sort();
      expect(stored!.deliveries).toEqual(
        agentIds.map((agentId) => ({
          signalId: req.id,
          agentId,
          seq: 1,
          status: 'queued',
          expiresAt: at(3_600_000),
          deliveredAt: null,
          attempts: 0,
          ackedAt: null,
          message: null,
          result: null,
          ackedAfterExpiry: false,
          timings: null,
        })),
      );
    });

    it('records a rejected request with its first problem, all problems when several, and charges nothing', async () => {
      const seeded = await seed(store, { quota: 10 });
      const problems: Problem[] = [
        { code: 'UNKNOWN_PARAMETER', detail: "unknown parameter 'sl'; did you mean sl_pips?", param: 'sl' },
        { code: 'INVALID_VOLUME', detail: 'vol must be a number above 0', param: 'vol' },
      ];
      const several = await store.ingest.commit(
        request(seeded, { verdict: { kind: 'reject', httpStatus: 422, problems } }),
      );
      expect(several.kind).toBe('recorded');
      expect(several.record).toMatchObject({
        status: 'rejected',
        httpStatus: 422,
        code: 'UNKNOWN_PARAMETER',
        detail: problems[0]!.detail,
        param: 'sl',
        errors: problems,
        signal: null,
        quota: null,
      });

      const one = await store.ingest.commit(
        request(seeded, {
          rawBody: '{"symbol":',
          contentType: 'application/json',
          verdict: {
            kind: 'reject',
            httpStatus: 400,
            problems: [{ code: 'PARSE_ERROR', detail: 'Body is not JSON.' }],
          },
        }),
      );
      expect(one.record).toMatchObject({
        status: 'rejected',
        httpStatus: 400,
        code: 'PARSE_ERROR',
        param: null,
        errors: null,
      });
      expect(await store.signals.get(one.record.id)).toMatchObject({ ...one.record, deliveries: [] });
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(0);
    });

    it('keeps raw bodies and details exactly, NUL characters and all', async () => {
      const seeded = await seed(store);
      const rawBody = 'EURUSD,buy,comment="a\u0000b", ünïcødé 🚀';
      const outcome = await store.ingest.commit(
        request(seeded, {
          rawBody,
          verdict: { kind: 'reject', httpStatus: 400, problems: [{ code: 'PARSE_ERROR', detail: 'bad byte' }] },
        }),
      );
      expect((await store.signals.get(outcome.record.id))!.rawBody).toBe(rawBody);
      const withSignal = await store.ingest.commit(
        request(seeded, { rawBody, verdict: accept({ symbol: 'EURUSD', action: 'buy', comment: 'a\u0000b 🚀' }) }),
      );
      expect((await store.signals.get(withSignal.record.id))!.signal).toEqual({
        symbol: 'EURUSD',
        action: 'buy',
        comment: 'a\u0000b 🚀',
      });
    });

    it('records the quota refusal as rejected 429 without a charge or deliveries once the quota is used up', async () => {
      const seeded = await seed(store, { quota: 2 });
      const first = await store.ingest.commit(request(seeded));
      const second = await store.ingest.commit(request(seeded));
      const third = await store.ingest.commit(request(seeded));
      expect(first.record.quota).toEqual({ period: PERIOD, used: 1, limit: 2 });
      expect(second.record.quota).toEqual({ period: PERIOD, used: 2, limit: 2 });
      expect(third.record).toMatchObject({
        status: 'rejected',
        httpStatus: 429,
        code: 'QUOTA_SIGNALS_IN',
        detail: QUOTA_PROBLEM.detail,
        param: null,
        errors: null,
        signal: null,
        quota: null,
      });
      expect((await store.signals.get(third.record.id))!.deliveries).toEqual([]);
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 2, limit: 2 });
      // A new period starts from zero.
      const nextMonth = await store.ingest.commit(
        request(seeded, { period: '2030-02', receivedAt: at(40 * 86_400_000) }),
      );
      expect(nextMonth.record.quota).toEqual({ period: '2030-02', used: 1, limit: 2 });
    });

    it('refuses every signal of an account whose quota is zero', async () => {
      const seeded = await seed(store, { quota: 0 });
      const outcome = await store.ingest.commit(request(seeded));
      expect(outcome.record).toMatchObject({ status: 'rejected', httpStatus: 429 });
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 0, limit: 0 });
    });

    it('charges exactly the quota under 200 concurrent ingests', async () => {
      const seeded = await seed(store, { quota: 50, agents: 1 });
      const outcomes = await Promise.all(Array.from({ length: 200 }, () => store.ingest.commit(request(seeded))));
      const queued = outcomes.filter((o) => o.record.status === 'accepted');
      const refused = outcomes.filter((o) => o.record.status === 'rejected');
      expect(queued).toHaveLength(50);
      expect(refused).toHaveLength(150);
      expect(refused.every((o) => o.record.httpStatus === 429)).toBe(true);
      expect(queued.map((o) => o.record.quota!.used).sort((a, b) => a - b)).toEqual(
        Array.from({ length: 50 }, (_, i) => i + 1),
      );
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 50, limit: 50 });
      expect(
        (await store.signals.list({ sourceId: seeded.source.id, status: 'accepted', limit: 500 })).signals,
      ).toHaveLength(50);
      expect(
        (await store.signals.list({ sourceId: seeded.source.id, status: 'rejected', limit: 500 })).signals,
      ).toHaveLength(150);
      const delivered = await store.deliveries.take(seeded.agents[0]!.id, at(2000), 500);
      expect(delivered.map((d) => d.seq)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
    });

    it('accepts the signals of one turn within the quota in order and refuses the rest, per account', async () => {
      const seeded = await seed(store, { quota: 4, agents: 1 });
      const other = await seed(store, { quota: 2, agents: 1 });
      const before = await store.ingest.commit(request(seeded));
      // One turn: both stores commit it together, the two accounts' signals interleaved, one a rejection.
      const requests = [
        request(seeded),
        request(other),
        request(seeded, {
          verdict: {
            kind: 'reject',
            httpStatus: 422,
            problems: [{ code: 'MISSING_SYMBOL', detail: 'No symbol given.' }],
          },
        }),
        request(seeded),
        request(other),
        request(seeded),
        request(other),
        request(seeded),
      ];
      const outcomes = await Promise.all(requests.map((r) => store.ingest.commit(r)));
      expect(outcomes.map((o) => [o.record.status, o.record.httpStatus, o.record.quota?.used ?? null])).toEqual([
        ['accepted', 202, 2],
        ['accepted', 202, 1],
        ['rejected', 422, null],
        ['accepted', 202, 3],
        ['accepted', 202, 2],
        ['accepted', 202, 4],
        ['rejected', 429, null],
        ['rejected', 429, null],
      ]);
      expect(outcomes[7]!.record).toMatchObject({ code: 'QUOTA_SIGNALS_IN', quota: null, outcome: null });
      expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual({ period: PERIOD, used: 4, limit: 4 });
      expect(await store.usage.get(other.accountId, PERIOD)).toEqual({ period: PERIOD, used: 2, limit: 2 });
      const delivered = await store.deliveries.take(seeded.agents[0]!.id, at(2000), 10);
      expect(delivered.map((d) => [d.id, d.seq])).toEqual(
        [before.record.id, requests[0]!.id, requests[3]!.id, requests[5]!.id].map((id, i) => [id, i + 1]),
      );
    });
  });

  describe('routing and sequence', () => {
    it("routes to the source's agents, or to every agent of the account when the list is empty", async () => {
      const seeded = await seed(store, { agents: 3, route: [0, 2] });
      const outcome = await store.ingest.commit(request(seeded));
      const deliveries = (await store.signals.get(outcome.record.id))!.deliveries;
      expect(deliveries.map((d) => d.agentId)).toEqual([seeded.agents[0]!.id, seeded.agents[2]!.id].sort());

      await store.sources.update(seeded.source.id, { agentIds: [] }, new Date().toISOString());
      const toAll = await store.ingest.commit(request(seeded, { sourceRevision: 1 }));
      const all = (await store.signals.get(toAll.record.id))!.deliveries;
      expect(all.map((d) => d.agentId)).toEqual(seeded.agents.map((a) => a.id).sort());
    });

    it('never routes to agents that do not exist or belong to another account', async () => {
      const seeded = await seed(store, { agents: 1 });
      const stranger = await seed(store, { agents: 1 });
      await store.sources.update(
        seeded.source.id,
        {
          agentIds: [seeded.agents[0]!.id, stranger.agents[0]!.id, 'agt-missing'],
        },
        new Date().toISOString(),
      );
      const outcome = await store.ingest.commit(request(seeded, { sourceRevision: 1 }));
      expect((await store.signals.get(outcome.record.id))!.deliveries.map((d) => d.agentId)).toEqual([
        seeded.agents[0]!.id,
      ]);
      expect(await store.deliveries.take(stranger.agents[0]!.id, at(2000), 10)).toEqual([]);
    });

    it('counts each agent’s deliveries not yet final, agents with none included', async () => {
      const seeded = await seed(store, { agents: 2, route: [0] });
      for (let i = 0; i < 3; i++) await store.ingest.commit(request(seeded));
      const depthOf = async (agentId: string) =>
        (await store.deliveries.countOpen()).find((d) => d.agentId === agentId)?.open;
      expect(await depthOf(seeded.agents[0]!.id)).toBe(3);
      expect(await depthOf(seeded.agents[1]!.id)).toBe(0);
      const [first] = await store.deliveries.take(seeded.agents[0]!.id, at(2000), 1);
      expect(await depthOf(seeded.agents[0]!.id)).toBe(3); // handed out, not yet acknowledged
      await store.deliveries.ack(
        seeded.agents[0]!.id,
        first!.id,
        { status: 'executed', message: null, result: null },
        at(2001),
      );
      expect(await depthOf(seeded.agents[0]!.id)).toBe(2);
    });

    it('numbers each agent’s deliveries 1, 2, 3… in acceptance order', async () => {
      const seeded = await seed(store, { agents: 2 });
      const ids: string[] = [];
      for (let i = 0; i < 5; i++)
        ids.push((await store.ingest.commit(request(seeded, { receivedAt: at(1000 + i) }))).record.id);
      for (const agent of seeded.agents) {
        const taken = await store.deliveries.take(agent.id, at(2000), 10);
        expect(taken.map((d) => d.seq)).toEqual([1, 2, 3, 4, 5]);
        expect(taken.map((d) => d.id)).toEqual(ids);
      }
    });

    it('gives concurrent ingests distinct sequence numbers in the same order on every agent', async () => {
      const seeded = await seed(store, { agents: 3 });
      await Promise.all(Array.from({ length: 40 }, () => store.ingest.commit(request(seeded))));
      const orders = await Promise.all(seeded.agents.map((a) => store.deliveries.take(a.id, at(2000), 100)));
      for (const taken of orders) expect(taken.map((d) => d.seq)).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
      expect(orders[1]!.map((d) => d.id)).toEqual(orders[0]!.map((d) => d.id));
      expect(orders[2]!.map((d) => d.id)).toEqual(orders[0]!.map((d) => d.id));
    });

    it('numbers each agent’s deliveries without gaps when sources routing to overlapping agents arrive at once', async () => {
      const seeded = await seed(store, { agents: 3, route: [1] });
      const [a0, a1, a2] = seeded.agents.map((a) => a.id) as [string, string, string];
      const wide = {
        ...seeded.source,
        id: `src-${randomUUID()}`,
        ...storedAuthKey(`key-${randomUUID()}`),
        agentIds: [a2, a0, a1],
      };
      await store.sources.create(wide);
      const onWide = { ...seeded, source: wide };
      const requests = Array.from({ length: 12 }, (_, i) => request(i % 3 === 0 ? onWide : seeded));
      const outcomes = await Promise.all(requests.map((r) => store.ingest.commit(r)));
      expect(outcomes.every((o) => o.record.status === 'accepted')).toBe(true);
      const expected = (agentId: string) =>
        requests.filter((r) => r.sourceId === wide.id || agentId === a1).map((r) => r.id);
      for (const agentId of [a0, a1, a2]) {
        const taken = await store.deliveries.take(agentId, at(2000), 100);
        expect(taken.map((d) => d.id)).toEqual(expected(agentId));
        expect(taken.map((d) => d.seq)).toEqual(expected(agentId).map((_, i) => i + 1));
      }
      // Later ingests continue the numbering.
      const next = await store.ingest.commit(request(onWide));
      const deliveries = (await store.signals.get(next.record.id))!.deliveries;
      expect(deliveries.map((d) => [d.agentId, d.seq])).toEqual(
        [a0, a1, a2].map((id) => [id, expected(id).length + 1]).sort(),
      );
    });

    it('keeps an accepted signal in the log even when no agent receives it', async () => {
      const seeded = await seed(store, { agents: 0 });
      const outcome = await store.ingest.commit(request(seeded));
      expect(outcome.record.status).toBe('accepted');
      expect((await store.signals.get(outcome.record.id))!.deliveries).toEqual([]);
    });

    it('refuses an ingest whose source is unknown or belongs to another account', async () => {
      const seeded = await seed(store);
      const other = await seed(store);
      await expect(store.ingest.commit(request(seeded, { sourceId: 'src-missing' }))).rejects.toThrow();
      await expect(store.ingest.commit(request(seeded, { accountId: other.accountId }))).rejects.toThrow();
      expect((await store.usage.get(other.accountId, PERIOD))!.used).toBe(0);
    });

    it('fails a bad request alone when it arrives together with good ones', async () => {
      const seeded = await seed(store, { quota: 10, agents: 1 });
      const other = await seed(store);
      const requests = [
        request(seeded),
        request(seeded, { sourceId: 'src-missing' }),
        request(seeded),
        request(seeded, { accountId: other.accountId }),
        request(seeded),
      ];
      // Submitted in one event-loop turn: both stores commit them together.
      const settled = await Promise.allSettled(requests.map((r) => store.ingest.commit(r)));
      expect(settled.map((s) => s.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected', 'fulfilled']);
      const recorded = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
      expect(recorded.map((o) => o.kind)).toEqual(['recorded', 'recorded', 'recorded']);
      expect(recorded.map((o) => o.record.quota!.used)).toEqual([1, 2, 3]);
      expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(3);
      expect((await store.usage.get(other.accountId, PERIOD))!.used).toBe(0);
      expect(await store.signals.get(requests[1]!.id)).toBeNull();
      expect(await store.signals.get(requests[3]!.id)).toBeNull();
      const taken = await store.deliveries.take(seeded.agents[0]!.id, at(2000), 10);
      expect(taken.map((d) => d.id)).toEqual([requests[0]!.id, requests[2]!.id, requests[4]!.id]);
      expect(taken.map((d) => d.seq)).toEqual([1, 2, 3]);
    });

    it('keeps every agent’s order when ingests for several accounts arrive at once', async () => {
      const accounts = [
        await seed(store, { agents: 2 }),
        await seed(store, { agents: 1 }),
        await seed(store, { agents: 2 }),
      ];
      const requests = Array.from({ length: 30 }, (_, i) =>
        request(accounts[(i * 7) % 3]!, { receivedAt: at(1000 + i) }),
      );
      const outcomes = await Promise.all(requests.map((r) => store.ingest.commit(r)));
      expect(outcomes.every((o) => o.kind === 'recorded' && o.record.status === 'accepted')).toBe(true);
      for (const seeded of accounts) {
        const mine = requests.filter((r) => r.accountId === seeded.accountId).map((r) => r.id);
        expect(mine).toHaveLength(10);
        for (const agent of seeded.agents) {
          const taken = await store.deliveries.take(agent.id, at(2000), 100);
          expect(taken.map((d) => d.id)).toEqual(mine);
          expect(taken.map((d) => d.seq)).toEqual(Array.from({ length: 10 }, (_, i) => i + 1));
        }
        expect((await store.usage.get(seeded.accountId, PERIOD))!.used).toBe(10);
      }
    });
  });
});
