import { createHash, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedAuthKey } from '../../src/store/auth-key-hash.js';
import type { Agent } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { at, contractStores, request, seed, type StoreHarness } from './store-harness.js';

/** The store contract for sources, run unchanged against both implementations. */
describe.each(contractStores('contract_sources'))('$name store', ({ harness: makeHarness }) => {
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

  describe('sources', () => {
    it('stores sources, finds them by auth key and applies patches', async () => {
      const { source, agents, authKey } = await seed(store, { agents: 2 });
      expect(await store.sources.get(source.id)).toEqual(source);
      expect(await store.sources.findByAuthKey(authKey)).toEqual(source);
      expect(await store.sources.findByAuthKey(authKey + 'x')).toBeNull();

      const patched = await store.sources.update(
        source.id,
        {
          name: 'Renamed',
          active: false,
          hmacSecret: 's3cret',
          agentIds: [agents[1]!.id],
          maxSignalAgeSeconds: 30,
          allowedIps: ['tradingview', '203.0.113.0/24', '2001:db8::1'],
        },
        new Date().toISOString(),
      );
      const expected = {
        ...source,
        name: 'Renamed',
        active: false,
        hmacSecret: 's3cret',
        agentIds: [agents[1]!.id],
        maxSignalAgeSeconds: 30,
        allowedIps: ['tradingview', '203.0.113.0/24', '2001:db8::1'],
        revision: 1,
      };
      expect(patched).toEqual(expected);
      expect(await store.sources.get(source.id)).toEqual(expected);

      // Clearing the secret and rotating the key: the old key stops naming the source at once.
      const newKey = 'new-key-' + randomUUID();
      const rotated = await store.sources.update(
        source.id,
        { hmacSecret: null, authKey: newKey },
        new Date().toISOString(),
      );
      expect(rotated?.hmacSecret).toBeNull();
      expect(rotated?.name).toBe('Renamed');
      expect(rotated).toMatchObject({
        authKeyHash: createHash('sha256').update(newKey).digest('hex'),
        authKeyHint: 'new-',
      });
      expect(await store.sources.findByAuthKey(authKey)).toBeNull();
      expect(await store.sources.findByAuthKey(newKey)).toEqual(rotated);
      expect(rotated?.allowedIps).toEqual(['tradingview', '203.0.113.0/24', '2001:db8::1']);
      const anyAddress = await store.sources.update(source.id, { allowedIps: [] }, new Date().toISOString());
      expect(anyAddress).toMatchObject({ allowedIps: [], revision: 3 });
      expect(await store.sources.findByAuthKey(newKey)).toEqual(anyAddress);
      expect(await store.sources.update('no-such-source', { name: 'x' }, new Date().toISOString())).toBeNull();
    });

    it('lists sources and agents of one account or all, newest first, a page at a time', async () => {
      const seeded = await seed(store, { agents: 3 });
      const second = {
        ...seeded.source,
        id: `src-2-${randomUUID()}`,
        ...storedAuthKey(`key-${randomUUID()}`),
        createdAt: at(10),
      };
      await store.sources.create(second);
      const sources = await store.sources.list({ accountId: seeded.accountId, limit: 1 });
      expect(sources.items).toEqual([second]);
      expect(sources.next).toBe(second.id);
      expect(await store.sources.list({ accountId: seeded.accountId, limit: 5, before: second.id })).toEqual({
        items: [seeded.source],
        next: null,
      });
      expect(await store.sources.list({ accountId: 'no-such-account', limit: 5 })).toEqual({ items: [], next: null });
      expect((await store.sources.list({ limit: 1000 })).items.map((s) => s.id)).toEqual(
        expect.arrayContaining([second.id, seeded.source.id]),
      );

      // An agent as the list reads it: no token digest, the state as its JSON text (none yet).
      const entry = ({ tokenHash: _, state: __, ...agent }: Agent) => ({ ...agent, stateJson: null });
      const agents = await store.agents.list({ accountId: seeded.accountId, limit: 2 });
      expect(agents.items).toEqual([entry(seeded.agents[2]!), entry(seeded.agents[1]!)]);
      expect(agents.next).toBe(seeded.agents[1]!.id);
      expect(await store.agents.list({ accountId: seeded.accountId, limit: 2, before: agents.next! })).toEqual({
        items: [entry(seeded.agents[0]!)],
        next: null,
      });
      expect((await store.agents.list({ limit: 1000 })).items.map((a) => a.id)).toEqual(
        expect.arrayContaining(seeded.agents.map((a) => a.id)),
      );
    });

    it('deletes a source with its log, idempotency keys and the deliveries of its signals', async () => {
      const seeded = await seed(store, { agents: 1 });
      const kept = await seed(store, { agents: 1 });
      const first = request(seeded, { idempotencyKey: 'k1', requestHash: 'h1' });
      await store.ingest.commit(first);
      await store.ingest.commit(
        request(seeded, {
          verdict: { kind: 'reject', httpStatus: 422, problems: [{ code: 'MISSING_SYMBOL', detail: 'x' }] },
        }),
      );
      const other = request(kept);
      await store.ingest.commit(other);

      expect(await store.sources.delete(seeded.source.id)).toBe(true);
      expect(await store.sources.get(seeded.source.id)).toBeNull();
      expect(await store.sources.findByAuthKey(seeded.authKey)).toBeNull();
      expect(await store.signals.get(first.id)).toBeNull();
      expect((await store.signals.list({ sourceId: seeded.source.id, limit: 10 })).signals).toEqual([]);
      expect(await store.deliveries.take(seeded.agents[0]!.id, at(2000), 10)).toEqual([]);
      expect(await store.sources.delete(seeded.source.id)).toBe(false);
      // Another source's log is untouched.
      expect((await store.signals.get(other.id))!.deliveries).toHaveLength(1);
      expect(await store.agents.get(seeded.agents[0]!.id)).toEqual(seeded.agents[0]);
    });
  });
});
