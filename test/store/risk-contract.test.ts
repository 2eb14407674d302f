import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Store } from '../../src/store/store.js';
import { at, contractStores, request, seed, type StoreHarness } from './store-harness.js';

/** The store contract for risk rules, halts and their audit, run unchanged on both stores. */
describe.each(contractStores('contract_risk'))('$name store', ({ harness: makeHarness }) => {
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

  async function recorded(seeded: Awaited<ReturnType<typeof seed>>, ms: number) {
    const outcome = await store.ingest.commit(request(seeded, { receivedAt: at(ms) }));
    if (outcome.kind !== 'recorded') throw new Error(`not recorded: ${outcome.kind}`);
    return outcome.record;
  }

  it('keeps rules per account and source, narrows the source by its account, and audits each change', async () => {
    const seeded = await seed(store);
    const account = { maxLotsPerOrder: 2, refusedSymbols: ['BTCUSD'] };
    const source = { maxLotsPerOrder: 5, maxOpenPositions: 3 };
    expect(await store.risk.setRules('source', seeded.source.id, source, 'admin token', at(1))).toMatchObject({
      accountId: seeded.accountId,
      effective: { maxLotsPerOrder: 5, maxOpenPositions: 3 },
    });
    await store.risk.setRules('account', seeded.accountId, account, 'admin token', at(2));
    // The account's change reaches the source's effective rules: the smaller limit holds.
    expect((await store.risk.getRules('source', seeded.source.id))?.effective).toEqual({
      maxLotsPerOrder: 2,
      maxOpenPositions: 3,
      refusedSymbols: ['BTCUSD'],
      tradingWindows: [],
    });
    expect((await store.risk.listRules(seeded.accountId)).map((r) => r.scope)).toEqual(['account', 'source']);
    await store.risk.setRules('account', seeded.accountId, { maxLotsPerOrder: 1 }, 'dashboard session ab12', at(3));
    expect(await store.risk.deleteRules('account', seeded.accountId, 'admin token', at(4))).toBe(true);
    expect(await store.risk.deleteRules('account', seeded.accountId, 'admin token', at(5))).toBe(false);
    expect((await store.risk.getRules('source', seeded.source.id))?.effective).toEqual({
      maxLotsPerOrder: 5,
      maxOpenPositions: 3,
      tradingWindows: [],
    });
    expect(await store.risk.setRules('account', 'acc-none', account, 'admin token', at(6))).toBeNull();

    const audit = await store.risk.audit({ accountId: seeded.accountId, limit: 10 });
    expect(audit.map((entry) => [entry.action, entry.actor, entry.before, entry.after])).toEqual([
      ['rules_deleted', 'admin token', { maxLotsPerOrder: 1 }, null],
      ['rules_set', 'dashboard session ab12', account, { maxLotsPerOrder: 1 }],
      ['rules_set', 'admin token', null, account],
      ['rules_set', 'admin token', null, source],
    ]);
    expect(audit[0]).toMatchObject({ scope: 'account', targetId: seeded.accountId, at: at(4) });
    const older = await store.risk.audit({ accountId: seeded.accountId, beforeId: audit[1]!.id, limit: 10 });
    expect(older.map((entry) => entry.id)).toEqual([audit[2]!.id, audit[3]!.id]);
  });

  it('carries the rules as they stood at the commit to the agent with the signal', async () => {
    const seeded = await seed(store);
    const none = await recorded(seeded, 1000);
    await store.risk.setRules('account', seeded.accountId, { maxLotsPerOrder: 1 }, 'admin token', at(1500));
    const first = await recorded(seeded, 2000);
    await store.risk.setRules('source', seeded.source.id, { maxLotsPerOrder: 0.5 }, 'admin token', at(2500));
    const second = await recorded(seeded, 3000);
    const handed = await store.deliveries.take(seeded.agents[0]!.id, at(4000), 10);
    expect(handed.map((s) => [s.id, s.risk?.maxLotsPerOrder])).toEqual([
      [none.id, undefined],
      [first.id, 1],
      [second.id, 0.5],
    ]);
    expect(handed[0]).not.toHaveProperty('risk');
  });

  it('halts at the door until released by hand, and what came while halted is never handed out', async () => {
    const seeded = await seed(store, { agents: 2 });
    const [one, two] = seeded.agents.map((agent) => agent.id) as [string, string];
    const before = await recorded(seeded, 1000);
    const halt = await store.risk.halt({
      id: `hlt_${seeded.accountId}`,
      scope: 'account',
      targetId: seeded.accountId,
      reason: 'daily loss',
      flatten: false,
      actor: 'admin token',
      at: at(1500),
    });
    expect(halt).toMatchObject({ kind: 'halted', halt: { accountId: seeded.accountId, releasedAt: null } });
    const again = await store.risk.halt({
      id: 'hlt_other',
      scope: 'account',
      targetId: seeded.accountId,
      reason: 'again',
      flatten: false,
      actor: 'admin token',
      at: at(1600),
    });
    expect(again).toMatchObject({ kind: 'already_halted', halt: { reason: 'daily loss' } });
    const during = await recorded(seeded, 2000);
    expect(during.outcome).toEqual({ halted: 2 });
    // Queued before the halt and not handed out: halted too.
    expect((await store.signals.get(before.id))?.outcome).toEqual({ halted: 2 });
    expect(await store.deliveries.take(one, at(2500), 10)).toEqual([]);
    expect(await store.risk.listHalts({ accountId: seeded.accountId, activeOnly: true, limit: 10 })).toHaveLength(1);

    const released = await store.risk.release('account', seeded.accountId, 'dashboard session ab12', at(3000));
    expect(released).toMatchObject({ releasedBy: 'dashboard session ab12', releasedAt: at(3000) });
    expect(await store.risk.release('account', seeded.accountId, 'admin token', at(3001))).toBeNull();
    expect(await store.risk.listHalts({ accountId: seeded.accountId, activeOnly: true, limit: 10 })).toEqual([]);
    const after = await recorded(seeded, 4000);
    // Nothing of what came while halted is handed out after the release.
    expect((await store.deliveries.take(two, at(4500), 10)).map((s) => s.id)).toEqual([after.id]);
    expect((await store.risk.audit({ accountId: seeded.accountId, limit: 10 })).map((entry) => entry.action)).toEqual([
      'released',
      'halted',
    ]);
  });

  it("halts one source's signals, or one agent's deliveries, and leaves the rest", async () => {
    const seeded = await seed(store, { agents: 2 });
    const [one, two] = seeded.agents.map((agent) => agent.id) as [string, string];
    await store.risk.halt({
      id: `hlt_a${seeded.accountId}`,
      scope: 'agent',
      targetId: one,
      reason: 'maxDailyLoss',
      flatten: false,
      actor: `agent ${one}`,
      at: at(500),
    });
    const signal = await recorded(seeded, 1000);
    expect(signal.outcome).toEqual({ halted: 1, queued: 1 });
    expect(await store.deliveries.take(one, at(1500), 10)).toEqual([]);
    expect((await store.deliveries.take(two, at(1500), 10)).map((s) => s.id)).toEqual([signal.id]);
    await store.risk.halt({
      id: `hlt_s${seeded.accountId}`,
      scope: 'source',
      targetId: seeded.source.id,
      reason: 'leaked URL',
      flatten: false,
      actor: 'admin token',
      at: at(2000),
    });
    expect((await recorded(seeded, 3000)).outcome).toEqual({ halted: 2 });
    // A deleted source takes its rules with it, and its halt is released (kept as history).
    await store.risk.setRules('source', seeded.source.id, { maxLotsPerOrder: 1 }, 'admin token', at(3500));
    expect(await store.sources.delete(seeded.source.id)).toBe(true);
    expect(await store.risk.getRules('source', seeded.source.id)).toBeNull();
    const halts = await store.risk.listHalts({ accountId: seeded.accountId, activeOnly: false, limit: 10 });
    expect(halts.map((halt) => [halt.scope, halt.releasedBy])).toEqual([
      ['source', 'source deleted'],
      ['agent', null],
    ]);
    expect(
      await store.risk.halt({
        id: 'hlt_none',
        scope: 'agent',
        targetId: 'agt-none',
        reason: 'x',
        flatten: false,
        actor: 'admin token',
        at: at(2000),
      }),
    ).toEqual({ kind: 'not_found' });
  });

  it('queues a flatten to every agent of the account, handed out despite the halt', async () => {
    const seeded = await seed(store, { agents: 2 });
    const queued = await recorded(seeded, 1000);
    const outcome = await store.risk.halt({
      id: `hlt_f${seeded.accountId.slice(4)}`,
      scope: 'account',
      targetId: seeded.accountId,
      reason: 'total drawdown',
      flatten: true,
      actor: 'admin token',
      at: at(2000),
    });
    if (outcome.kind !== 'halted') throw new Error(outcome.kind);
    expect(outcome.flattens).toHaveLength(1);
    expect(outcome.flattens[0]!.agentIds.sort()).toEqual(seeded.agents.map((a) => a.id).sort());
    for (const agent of seeded.agents) {
      const handed = await store.deliveries.take(agent.id, at(2500), 10);
      expect(handed).toEqual([
        expect.objectContaining({
          id: outcome.flattens[0]!.signalId,
          flatten: { reason: 'total drawdown' },
          signal: { symbol: '*', action: 'positionflat' },
        }),
      ]);
      expect(
        await store.deliveries.ack(
          agent.id,
          outcome.flattens[0]!.signalId,
          { status: 'executed', message: 'flat', result: null },
          at(2600),
        ),
      ).toMatchObject({ kind: 'acked' });
    }
    expect((await store.signals.get(queued.id))?.outcome).toEqual({ halted: 2 });
    expect((await store.signals.get(outcome.flattens[0]!.signalId))?.outcome).toEqual({ executed: 2 });
    expect((await store.risk.audit({ accountId: seeded.accountId, limit: 10 })).map((entry) => entry.action)).toEqual([
      'flatten_queued',
      'halted',
    ]);
  });
});
