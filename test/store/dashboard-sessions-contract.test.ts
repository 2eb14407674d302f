import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { at, contractStores, type StoreHarness } from './store-harness.js';

/** The store contract for dashboard sessions, run unchanged against both implementations. */
describe.each(contractStores('contract_dashboard_sessions'))('$name store', ({ harness: makeHarness }) => {
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

  describe('dashboard sessions', () => {
    it('keeps dashboard sessions until deleted, and removes expired ones when the next is created', async () => {
      const session = {
        idDigest: `d-${randomUUID()}`,
        adminTokenDigest: 'admin',
        createdAt: at(0),
        expiresAt: at(1000),
      };
      await store.dashboardSessions.create(session);
      expect(await store.dashboardSessions.get(session.idDigest)).toEqual(session);
      const later = {
        idDigest: `d-${randomUUID()}`,
        adminTokenDigest: 'admin',
        createdAt: at(1000),
        expiresAt: at(5000),
      };
      await store.dashboardSessions.create(later);
      expect(await store.dashboardSessions.get(session.idDigest)).toBeNull();
      expect(await store.dashboardSessions.get(later.idDigest)).toEqual(later);
      expect(await store.dashboardSessions.delete(later.idDigest)).toBe(true);
      expect(await store.dashboardSessions.delete(later.idDigest)).toBe(false);
      expect(await store.dashboardSessions.get(later.idDigest)).toBeNull();
    });
  });
});
