import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCode } from '../../src/errors/catalog.js';
import type { Store } from '../../src/store/store.js';
import {
  accept,
  at,
  BUY,
  PERIOD,
  postgresHarness,
  request,
  seed,
  sqliteHarness,
  type StoreHarness,
} from './store-harness.js';

const EXECUTED = { status: 'executed' as const, message: null, result: null };

/** Retention's store operations, on both backends, each case on a store of its own. */
describe.each([
  { name: 'sqlite', harness: () => sqliteHarness() },
  { name: 'postgres', harness: () => postgresHarness('retention') },
])('$name store retention', ({ harness: makeHarness }) => {
  const opened: Array<{ harness: StoreHarness; stores: Store[] }> = [];
  afterEach(async () => {
    for (const { harness, stores } of opened.splice(0)) {
      for (const store of stores) await store.close();
      await harness.dispose();
    }
  });
  async function fresh(instances = 1): Promise<Store[]> {
    const harness = await makeHarness();
    const stores: Store[] = [];
    for (let i = 0; i < instances; i++) stores.push(await harness.open());
    opened.push({ harness, stores });
    return stores;
  }

  it('deletes old signals whose deliveries are all final, with their deliveries; keeps pending ones, keyed ones and usage', async () => {
    const [store] = (await fresh()) as [Store];
    const seeded = await seed(store, { agents: 1 });
    const agentId = seeded.agents[0]!.id;
    const ingest = async (ms: number, extra: Parameters<typeof request>[1] = {}) =>
      (await store.ingest.commit(request(seeded, { receivedAt: at(ms), ...extra }))).record.id;

    const executed = await ingest(1000);
    const delivered = await ingest(1001);
    const expired = await ingest(1002, { verdict: accept(BUY, at(1500)) });
    const refused = await ingest(1003, {
      verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: ErrorCode.MISSING_ACTION, detail: 'no action' }] },
    });
    const keyed = await ingest(1004, { idempotencyKey: 'k-1', requestHash: 'h' });
    // Hand out what is there and settle `executed` and `keyed`; `expired` expires on this take.
    expect((await store.deliveries.take(agentId, at(1600), 10)).map((s) => s.id)).toEqual([executed, delivered, keyed]);
    await store.deliveries.ack(agentId, executed, EXECUTED, at(1700));
    await store.deliveries.ack(agentId, keyed, EXECUTED, at(1700));
    const queued = await ingest(1005);
    const recent = await ingest(9000);
    const usage = await store.usage.get(seeded.accountId, PERIOD);

    // Small batches: at most `limit` a call, oldest first.
    expect(await store.retention.pruneSignals(at(5000), 1)).toBe(1);
    expect(await store.signals.get(executed)).toBeNull();
    expect(await store.retention.pruneSignals(at(5000), 100)).toBe(2);
    expect(await store.retention.pruneSignals(at(5000), 100)).toBe(0);
    for (const gone of [executed, expired, refused]) expect(await store.signals.get(gone)).toBeNull();
    for (const kept of [delivered, keyed, queued, recent]) expect(await store.signals.get(kept)).not.toBeNull();
    expect((await store.signals.get(delivered))!.deliveries[0]).toMatchObject({ status: 'delivered' });
    // Usage is counted apart: pruning the log does not give quota back.
    expect(await store.usage.get(seeded.accountId, PERIOD)).toEqual(usage);

    // The key answers replays until it is pruned; then its signal may go.
    expect(await store.retention.pruneIdempotencyKeys(at(1004), 100)).toBe(0);
    expect(await store.retention.pruneIdempotencyKeys(at(5000), 100)).toBe(1);
    expect(await store.retention.pruneSignals(at(5000), 100)).toBe(1);
    expect(await store.signals.get(keyed)).toBeNull();

    // Once acknowledged, the pending ones go too.
    await store.deliveries.ack(agentId, delivered, EXECUTED, at(2000));
    expect(await store.retention.pruneSignals(at(5000), 100)).toBe(1);
    expect(await store.signals.get(delivered)).toBeNull();
    expect((await store.signals.list({ limit: 100 })).signals.map((s) => s.id).sort()).toEqual([queued, recent].sort());
    // The agent's queue is untouched: the queued one is still handed out.
    expect((await store.deliveries.take(agentId, at(9500), 10)).map((s) => s.id)).toEqual([queued, recent]);
  });

  it('lets several instances prune at once: each signal deleted once, none kept that should go', async () => {
    const stores = await fresh(3);
    const [first] = stores as [Store];
    const seeded = await seed(first, { agents: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 300; i++)
      ids.push((await first.ingest.commit(request(seeded, { receivedAt: at(1000 + i) }))).record.id);
    const counts = await Promise.all(
      stores.map(async (store) => {
        let total = 0;
        for (let n = -1; n !== 0; total += n) n = await store.retention.pruneSignals(at(5000), 25);
        return total;
      }),
    );
    expect(counts.reduce((a, b) => a + b, 0)).toBe(300);
    expect((await first.signals.list({ limit: 10 })).signals).toEqual([]);
  });
});
