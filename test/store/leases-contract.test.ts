import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { at, contractStores, type StoreHarness } from './store-harness.js';

/** The store contract for named leases, run unchanged on both stores, from two connections. */
describe.each(contractStores('contract_leases'))('$name store', ({ harness: makeHarness }) => {
  let harness: StoreHarness;
  let store: Store;
  let other: Store;

  beforeAll(async () => {
    harness = await makeHarness();
    store = await harness.open();
    other = await harness.open();
  });

  afterAll(async () => {
    await other?.close();
    await store?.close();
    await harness?.dispose();
  });

  it('gives a lease to one holder until it runs out, renews it for that holder, then passes it on', async () => {
    expect(await store.leases.hold('watch', 'a', at(0), 30_000)).toBe(true);
    expect(await other.leases.hold('watch', 'b', at(1_000), 30_000)).toBe(false);
    // Renewed by its holder: still not b's at 30 s.
    expect(await store.leases.hold('watch', 'a', at(20_000), 30_000)).toBe(true);
    expect(await other.leases.hold('watch', 'b', at(30_000), 30_000)).toBe(false);
    // Not renewed: b takes it once it ran out, and a no longer has it.
    expect(await other.leases.hold('watch', 'b', at(50_000), 30_000)).toBe(true);
    expect(await store.leases.hold('watch', 'a', at(51_000), 30_000)).toBe(false);
    // Another name is another lease.
    expect(await store.leases.hold('other', 'a', at(51_000), 30_000)).toBe(true);
  });

  it('passes a released lease on at once; a release by a non-holder changes nothing', async () => {
    expect(await store.leases.hold('handover', 'a', at(0), 30_000)).toBe(true);
    await other.leases.release('handover', 'b');
    expect(await other.leases.hold('handover', 'b', at(1_000), 30_000)).toBe(false);
    await store.leases.release('handover', 'a');
    expect(await other.leases.hold('handover', 'b', at(1_000), 30_000)).toBe(true);
  });

  it('gives a free lease to exactly one of many asking at once', async () => {
    const askers = Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? store : other));
    const won = await Promise.all(askers.map((s, i) => s.leases.hold('race', `h${i}`, at(0), 30_000)));
    expect(won.filter(Boolean)).toHaveLength(1);
  });
});
