import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storedAuthKey } from '../../src/store/auth-key-hash.js';
import type { Agent } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { at, contractStores, request, seed, type StoreHarness } from './store-harness.js';

/** The store contract for agents, run unchanged against both implementations. */
describe.each(contractStores('contract_agents'))('$name store', ({ harness: makeHarness }) => {
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

  describe('agents', () => {
    it('stores agents, finds them by token hash, lists them and records their state', async () => {
      const { accountId, agents } = await seed(store, { agents: 2 });
      const [first, second] = agents as [(typeof agents)[0], (typeof agents)[0]];
      expect(await store.agents.get(first.id)).toEqual(first);
      // Who the token belongs to, never the agent's state: the check on every agent request reads no more.
      expect(await store.agents.findByTokenHash(second.tokenHash)).toEqual({
        id: second.id,
        accountId,
        name: second.name,
        tokenHash: second.tokenHash,
      });
      expect(await store.agents.findByTokenHash('unknown')).toBeNull();
      expect((await store.agents.list({ accountId, limit: 10 })).items.map((a) => a.id)).toEqual([second.id, first.id]);
      expect(await store.agents.list({ accountId: 'no-such-account', limit: 10 })).toEqual({ items: [], next: null });

      const state = { balance: 10_000.5, currency: 'USD', positions: [{ symbol: 'EURUSD', volume: 0.1 }] };
      await store.agents.saveState(first.id, state, at(5000));
      expect(await store.agents.get(first.id)).toMatchObject({ state, lastSeenAt: at(5000) });
      // The list carries the state as the text it was stored as, JSON.stringify's, unparsed.
      const listed = (await store.agents.list({ accountId, limit: 10 })).items;
      expect(listed.map((a) => [a.id, a.stateJson, a.lastSeenAt])).toEqual([
        [second.id, null, null],
        [first.id, JSON.stringify(state), at(5000)],
      ]);
      await store.agents.touch(first.id, at(9000));
      expect(await store.agents.get(first.id)).toMatchObject({ state, lastSeenAt: at(9000) });
      expect(await store.agents.get(second.id)).toMatchObject({ state: null, lastSeenAt: null });
    });

    it('rotates an agent token: the old digest finds nothing from then on, and its watchers are woken', async () => {
      const seeded = await seed(store, { agents: 1 });
      const agent = seeded.agents[0]!;
      const woken: string[][] = [];
      const stop = store.deliveries.watch((ids) => woken.push(ids));
      try {
        expect((await store.agents.findByTokenHash(agent.tokenHash))!.id).toBe(agent.id);
        const rotated = await store.agents.rotateToken(agent.id, 'new-digest-' + randomUUID());
        expect(rotated).toEqual({ ...agent, tokenHash: rotated!.tokenHash });
        expect(await store.agents.findByTokenHash(agent.tokenHash)).toBeNull();
        expect(await store.agents.findByTokenHash(rotated!.tokenHash)).toEqual({
          id: agent.id,
          accountId: agent.accountId,
          name: agent.name,
          tokenHash: rotated!.tokenHash,
        });
        await expect.poll(() => woken.some((ids) => ids.includes(agent.id))).toBe(true);
      } finally {
        stop();
      }
      expect(await store.agents.rotateToken('no-such-agent', 'x')).toBeNull();
    });

    it('deletes an agent with its deliveries, never handing them out, unless a source routes to it by id', async () => {
      const seeded = await seed(store, { agents: 2, route: [0] });
      const everyAgent = {
        ...seeded.source,
        id: `src-all-${randomUUID()}`,
        ...storedAuthKey(`key-${randomUUID()}`),
        agentIds: [],
      };
      await store.sources.create(everyAgent);
      const [routed, other] = seeded.agents as [Agent, Agent];
      expect(await store.agents.delete(routed.id)).toEqual({ kind: 'routed', sourceIds: [seeded.source.id] });
      expect(await store.agents.get(routed.id)).toEqual(routed);
      expect((await store.agents.findByTokenHash(other.tokenHash))!.id).toBe(other.id);

      const signal = request({ ...seeded, source: everyAgent });
      await store.ingest.commit(signal);
      expect((await store.signals.get(signal.id))!.deliveries.map((d) => d.agentId).sort()).toEqual(
        [routed.id, other.id].sort(),
      );
      expect(await store.agents.delete(other.id)).toEqual({ kind: 'deleted' });
      expect(await store.agents.get(other.id)).toBeNull();
      expect(await store.agents.findByTokenHash(other.tokenHash)).toBeNull();
      expect(await store.deliveries.take(other.id, at(2000), 10)).toEqual([]);
      // The signal stays in the log, with the deliveries of the agents that remain.
      expect((await store.signals.get(signal.id))!.deliveries.map((d) => d.agentId)).toEqual([routed.id]);
      // A later signal of the account goes to the agents that remain.
      const later = request({ ...seeded, source: (await store.sources.get(everyAgent.id))! });
      await store.ingest.commit(later);
      expect((await store.signals.get(later.id))!.deliveries.map((d) => d.agentId)).toEqual([routed.id]);
      expect(await store.agents.delete(other.id)).toEqual({ kind: 'not_found' });
    });
  });
});
