import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExpiredDelivery } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { accept, at, postgresHarness, request, seed, sqliteHarness, type StoreHarness } from './store-harness.js';

/**
 * The expiry sweep against the store, with several instances on one database sweeping while the
 * agent is being handed deliveries: every queued delivery past its deadline is expired and
 * reported by exactly one instance, and none handed out before its deadline is expired.
 */
describe.each([
  { name: 'sqlite', instances: 1, harness: () => sqliteHarness() },
  { name: 'postgres', instances: 3, harness: () => postgresHarness('sweep') },
])('$name: the expiry sweep', ({ instances, harness: makeHarness }) => {
  let harness: StoreHarness;
  const stores: Store[] = [];

  beforeAll(async () => {
    harness = await makeHarness();
    for (let i = 0; i < instances; i++) stores.push(await harness.open());
  });
  afterAll(async () => {
    for (const store of stores) await store.close();
    await harness?.dispose();
  });

  it('expires each due queued delivery once, across instances, and never one handed out', async () => {
    const store = stores[0]!;
    const seeded = await seed(store, { agents: 1 });
    const agentId = seeded.agents[0]!.id;
    const ids: string[] = [];
    for (let i = 0; i < 300; i++) {
      const req = request(seeded, { verdict: accept(undefined, at(5_000)) });
      await store.ingest.commit(req);
      ids.push(req.id);
    }
    // Not yet due: nothing is expired.
    expect(await store.deliveries.expire(at(4_999), 500)).toBe(0);

    const reported: ExpiredDelivery[][] = stores.map(() => []);
    const unwatch = stores.map((s, i) => s.deliveries.watchExpiries((expired) => reported[i]!.push(...expired)));
    const handedEarlier = await store.deliveries.take(agentId, at(2_000), 50);
    // Sweeps of every instance in batches of 20, racing a hand-out made just before the deadline.
    const sweepAll = (s: Store) =>
      (async () => {
        while ((await s.deliveries.expire(at(10_000), 20)) > 0);
      })();
    const [handedLast] = await Promise.all([
      stores[stores.length - 1]!.deliveries.take(agentId, at(4_999), 100),
      ...stores.map(sweepAll),
    ]);
    unwatch.forEach((stop) => stop());

    const handed = new Set([...handedEarlier, ...handedLast].map((signal) => signal.id));
    const expired = reported.flat();
    expect(new Set(expired.map((e) => e.signalId)).size).toBe(expired.length);
    expect(expired.every((e) => !handed.has(e.signalId))).toBe(true);
    expect(expired.length + handed.size).toBe(300);
    for (const e of expired)
      expect(e).toMatchObject({ agentId, expiresAt: at(5_000), receivedAt: at(1000), expiredAt: at(10_000) });
    for (const id of ids) {
      const { deliveries } = (await store.signals.get(id))!;
      expect(deliveries).toEqual([expect.objectContaining({ status: handed.has(id) ? 'delivered' : 'expired' })]);
    }
    // Nothing is left to sweep, and a handed-out delivery is left to its agent.
    expect(await store.deliveries.expire(at(20_000), 500)).toBe(0);
  });
});
