import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { at, contractStores, PERIOD, type StoreHarness } from './store-harness.js';

/** The store contract for accounts and their usage, run unchanged against both implementations. */
describe.each(contractStores('contract_accounts'))('$name store', ({ harness: makeHarness }) => {
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

  describe('accounts', () => {
    it('stores and answers accounts and their usage', async () => {
      const id = `acc-${randomUUID()}`;
      const account = { id, name: 'Main desk', monthlySignalQuota: 500, createdAt: at(0) };
      await store.accounts.create(account);
      expect(await store.accounts.get(id)).toEqual(account);
      expect(await store.accounts.get('no-such-account')).toBeNull();
      expect(await store.usage.get(id, PERIOD)).toEqual({ period: PERIOD, used: 0, limit: 500 });
      expect(await store.usage.get('no-such-account', PERIOD)).toBeNull();
    });

    it('refuses a second account with the same id', async () => {
      const account = { id: `acc-${randomUUID()}`, name: 'A', monthlySignalQuota: 1, createdAt: at(0) };
      await store.accounts.create(account);
      await expect(store.accounts.create(account)).rejects.toThrow();
    });

    it('lists accounts newest first (createdAt, then id), a page at a time', async () => {
      // Later than every other test's accounts, so they come first in the list of all.
      const ids = ['acc-list-a', 'acc-list-b', 'acc-list-c', 'acc-list-d'].map((id) => `${id}-${randomUUID()}`);
      const created = [at(9e11), at(9e11), at(9e11 + 1), at(9e11 + 2)];
      for (const [i, id] of ids.entries())
        await store.accounts.create({ id, name: id, monthlySignalQuota: 5, createdAt: created[i]! });
      // Two share a createdAt: the id decides.
      const sameTime = [ids[0]!, ids[1]!].sort().reverse();
      const newestFirst = [ids[3]!, ids[2]!, ...sameTime];
      const page1 = await store.accounts.list({ limit: 3 });
      expect(page1.items.map((a) => a.id)).toEqual(newestFirst.slice(0, 3));
      expect(page1.items[0]).toEqual({ id: ids[3], name: ids[3], monthlySignalQuota: 5, createdAt: created[3] });
      expect(page1.next).toBe(newestFirst[2]);
      const page2 = await store.accounts.list({ limit: 1, before: page1.next! });
      expect(page2.items.map((a) => a.id)).toEqual([newestFirst[3]]);
      expect((await store.accounts.list({ limit: 4 })).next).toBe(newestFirst[3]);
      expect(await store.accounts.list({ limit: 3, before: 'acc-unknown' })).toEqual({ items: [], next: null });
    });
  });
});
