import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LedgerFill } from '../../src/ledger/ledger-trade.js';
import type { Store } from '../../src/store/store.js';
import { accept, at, contractStores, request, seed, type StoreHarness } from './store-harness.js';

function fill(venueFillId: string, over: Partial<LedgerFill> = {}): LedgerFill {
  return {
    venueFillId,
    orderId: `ord-${venueFillId}`,
    symbol: 'EURUSD',
    side: 'buy',
    lots: 0.1,
    price: 1.1,
    fee: 0.02,
    feeCurrency: 'USD',
    at: at(5000),
    signalId: null,
    ...over,
  };
}

/** The store contract for the ledger, run unchanged against both implementations. */
describe.each(contractStores('contract_ledger'))('$name store', ({ harness: makeHarness }) => {
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

  it('records a fill once per agent and venue id, and keeps what the first report said', async () => {
    const seeded = await seed(store, { agents: 2 });
    const [one, two] = seeded.agents.map((a) => ({ id: a.id, accountId: seeded.accountId }));
    expect(
      await store.ledger.record(
        one!,
        [fill('f1'), fill('f2', { side: 'sell', effect: 'close', profit: 3.5 })],
        [],
        at(6000),
      ),
    ).toEqual({
      recorded: 2,
      known: 0,
    });
    // Sent again (a restart before the answer), with a changed price: still recorded once, as first said.
    expect(await store.ledger.record(one!, [fill('f1', { price: 9 }), fill('f3')], [], at(7000))).toEqual({
      recorded: 1,
      known: 1,
    });
    // Another agent's fill with the same venue id is its own.
    expect(await store.ledger.record(two!, [fill('f1')], [], at(7000))).toEqual({ recorded: 1, known: 0 });
    const fills = await store.ledger.fills({ agentId: one!.id });
    expect(fills.map((f) => f.venueFillId)).toEqual(['f1', 'f2', 'f3']);
    expect(fills[0]).toMatchObject({
      price: 1.1,
      fee: 0.02,
      at: at(5000),
      agentId: one!.id,
      accountId: seeded.accountId,
      sourceId: null,
    });
    expect(fills[0]!.effect).toBeUndefined();
    expect(fills[1]).toMatchObject({ side: 'sell', effect: 'close', profit: 3.5 });
    expect(await store.ledger.fills({ accountId: seeded.accountId })).toHaveLength(4);
    const reopened = await harness.open();
    try {
      expect(await reopened.ledger.fills({ agentId: one!.id })).toEqual(fills);
    } finally {
      await reopened.close();
    }
  });

  it('records reports sent at the same moment each as its own: a fill in two of them new for the first, a bad one refused alone', async () => {
    const seeded = await seed(store, { agents: 2 });
    const [one, two] = seeded.agents.map((a) => ({ id: a.id, accountId: seeded.accountId }));
    const outcomes = await Promise.allSettled([
      store.ledger.record(one!, [fill('c1'), fill('c2')], [], at(6000)),
      store.ledger.record(two!, [fill('c1')], [], at(6000)),
      store.ledger.record(one!, [fill('c2'), fill('c3'), fill('c3')], [], at(6000)),
      store.ledger.record(two!, [fill('c4', { side: 'hold' as LedgerFill['side'] })], [], at(6000)),
      store.ledger.record(two!, [fill('c5')], [], at(6000)),
    ]);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : 'refused'))).toEqual([
      { recorded: 2, known: 0 },
      { recorded: 1, known: 0 },
      { recorded: 1, known: 2 },
      'refused',
      { recorded: 1, known: 0 },
    ]);
    expect((await store.ledger.fills({ agentId: one!.id })).map((f) => f.venueFillId)).toEqual(['c1', 'c2', 'c3']);
    expect((await store.ledger.fills({ agentId: two!.id })).map((f) => f.venueFillId)).toEqual(['c1', 'c5']);
  });

  it("gives a fill its signal's source, comment and time of receipt, only for a signal of the agent's account", async () => {
    const seeded = await seed(store, { agents: 1 });
    const other = await seed(store, { agents: 1 });
    const signal = request(seeded, {
      receivedAt: at(2000),
      verdict: accept({ symbol: 'EURUSD', action: 'buy', volume: { type: 'lots', value: 0.1 }, comment: 'breakout' }),
    });
    await store.ingest.commit(signal);
    const foreign = request(other);
    await store.ingest.commit(foreign);
    const agent = { id: seeded.agents[0]!.id, accountId: seeded.accountId };
    await store.ledger.record(
      agent,
      [fill('a', { signalId: signal.id }), fill('b', { signalId: foreign.id })],
      [],
      at(6000),
    );
    const [a, b] = await store.ledger.fills({ agentId: agent.id });
    expect(a).toMatchObject({
      signalId: signal.id,
      sourceId: seeded.source.id,
      strategy: 'breakout',
      receivedAt: at(2000),
    });
    expect(b).toMatchObject({ signalId: foreign.id, sourceId: null, strategy: null, receivedAt: null });
  });

  it('records a funding payment once per agent and venue id', async () => {
    const seeded = await seed(store, { agents: 1 });
    const agent = { id: seeded.agents[0]!.id, accountId: seeded.accountId };
    const payment = { venueFundingId: 'fund-1', symbol: 'BTCUSDT', amount: -0.25, currency: 'USDT', at: at(8000) };
    expect(await store.ledger.record(agent, [], [payment], at(9000))).toEqual({ recorded: 1, known: 0 });
    expect(await store.ledger.record(agent, [], [payment], at(9500))).toEqual({ recorded: 0, known: 1 });
    expect(await store.ledger.funding({ accountId: seeded.accountId })).toEqual([
      { ...payment, agentId: agent.id, accountId: seeded.accountId },
    ]);
  });

  it('records a bust once per agent and busted fill id, before or after its fill; a second bust of more lots replaces it', async () => {
    const seeded = await seed(store, { agents: 2 });
    const [one, two] = seeded.agents.map((a) => ({ id: a.id, accountId: seeded.accountId }));
    const first = { venueFillId: 'ord-9@0.1', lots: 0.04, at: at(8000) };
    // The bust came first (its fill still in the agent's outbox): recorded all the same.
    expect(await store.ledger.record(one!, [], [], at(9000), [first])).toEqual({ recorded: 1, known: 0 });
    expect(await store.ledger.record(one!, [fill('ord-9@0.1')], [], at(9100), [first])).toEqual({
      recorded: 1,
      known: 1,
    });
    // The venue took the rest of that fill back: its lots in all, 0.1, replace the 0.04.
    const bust = { venueFillId: 'ord-9@0.1', lots: 0.1, at: at(8500) };
    expect(await store.ledger.record(one!, [], [], at(9200), [bust])).toEqual({ recorded: 1, known: 0 });
    // The first sent again after a restart: known, the 0.1 stands.
    expect(await store.ledger.record(one!, [], [], at(9500), [first])).toEqual({ recorded: 0, known: 1 });
    expect(await store.ledger.busts({ agentId: two!.id })).toEqual([]);
    const recorded = [{ ...bust, agentId: one!.id, accountId: seeded.accountId }];
    expect(await store.ledger.busts({ accountId: seeded.accountId })).toEqual(recorded);
    const reopened = await harness.open();
    try {
      expect(await reopened.ledger.busts({ agentId: one!.id })).toEqual(recorded);
    } finally {
      await reopened.close();
    }
  });
});
