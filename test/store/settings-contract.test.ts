import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { contractStores, type StoreHarness } from './store-harness.js';

/** The store contract for settings, run unchanged against both implementations. */
describe.each(contractStores('contract_settings'))('$name store', ({ harness: makeHarness }) => {
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

  describe('settings', () => {
    it('keeps the first claimed value and answers it to later claims', async () => {
      const name = `admin-token-${randomUUID()}`;
      expect(await store.settings.get(name)).toBeNull();
      expect(await store.settings.claim(name, 'first')).toBe('first');
      expect(await store.settings.claim(name, 'second')).toBe('first');
      expect(await store.settings.get(name)).toBe('first');
    });

    it('deletes a setting, after which a claim takes the new value', async () => {
      const name = `admin-token-${randomUUID()}`;
      await store.settings.claim(name, 'first');
      await store.settings.delete(name);
      expect(await store.settings.get(name)).toBeNull();
      await store.settings.delete(name);
      expect(await store.settings.claim(name, 'second')).toBe('second');
    });

    it('answers the same value to concurrent claims', async () => {
      const name = `race-${randomUUID()}`;
      const values = await Promise.all(Array.from({ length: 10 }, (_, i) => store.settings.claim(name, `v${i}`)));
      expect(new Set(values).size).toBe(1);
    });
  });
});
