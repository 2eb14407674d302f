import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import { BYBIT, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';
import type { TestServer } from '../support/start-test-server.js';

/**
 * A real `signalgate agent --venue ccxt --exchange bybit` process against the stateful Bybit v5
 * test exchange (test/fakes/bybit-v5-exchange.ts, written from Bybit's published v5 API
 * documentation), reached through `--proxy-url`. What the exchange holds is read from its state,
 * what the agent believes from the signal outcomes, the published state and the ledger.
 */
describe('a real agent process on the Bybit v5 test exchange', () => {
  const bed = useCcxtAgentBed(BYBIT);
  let server: TestServer;
  beforeAll(() => {
    server = bed.server;
  });

  const start = async (name: string, args: string[] = []) => {
    const made = await bed.start(name, { args });
    return {
      ...made,
      bybit: bed.exchange,
      trades: async () =>
        (await server.admin('GET', `/api/admin/ledger/trades?accountId=${made.accountId}`)).body.trades as any[],
    };
  };
  const outcome = (signal: string) => bed.outcome(signal);

  it('start-up loads the linear markets only, not the coins', async () => {
    const { bybit } = await start('bybit-startup', ['--reconcile-every', '1']);
    expect(bybit.requests('GET', '/v5/market/instruments-info').map((r) => r.params.category)).toEqual([
      'linear',
      'linear',
    ]);
    expect(bybit.requests('GET', '/v5/asset/coin/query-info')).toEqual([]);
    // CCXT asks the account kind in each of the first reads, which start together (how many
    // start before the first answer depends on timing); never after, in the reconciliations.
    const asked = bybit.requests('GET', '/v5/user/query-api').length;
    expect(asked).toBeGreaterThan(0);
    const reads = bybit.requests('GET', '/v5/position/list').length;
    await waitUntil(
      () => bybit.requests('GET', '/v5/position/list').length >= reads + 2,
      'two reconciliations after start-up',
      20_000,
    );
    expect(bybit.requests('GET', '/v5/user/query-api').length).toBe(asked);
    expect(bybit.received.filter((r) => r.params.category !== undefined && r.params.category !== 'linear')).toEqual([]);
  });

  it("a market entry's fill is read back (the create answers ids only): the position is at the exchange's price, its stop and target at the exchange", async () => {
    const { bybit, authKey, published } = await start('bybit-entry');
    // The top of the book is taken between the agent's quote (ask 50000.1) and its order: it fills at 50000.6.
    const slip = await fetch(`${bybit.url}_control/slip?ticks=5`, { method: 'POST' });
    expect(slip.status).toBe(200);
    const entry = await postSignal(server.url, authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000');
    expect(await outcome(entry)).toMatchObject({
      status: 'executed',
      message: expect.stringContaining('opened buy 0.01 BTC/USDT:USDT at 50000.6'),
    });
    const held = bybit.state();
    expect(held.positions).toEqual([{ symbol: 'BTCUSDT', size: 0.01, avgPrice: 50000.6 }]);
    expect(
      held.openOrders.map((o) => [o.orderLinkId, o.side, o.orderType, o.triggerPrice, o.triggerDirection, o.price]),
    ).toEqual([
      [`${clientOrderId(entry, 'p1r0')}s`, 'Sell', 'Market', 49000, 2, 0],
      [`${clientOrderId(entry, 'p1r0')}t1`, 'Sell', 'Limit', 0, 0, 51000],
    ]);
    expect(held.openOrders.every((o) => o.reduceOnly)).toBe(true);
    await waitUntil(
      async () => (await published())?.positions?.[0]?.price === 50000.6,
      "the exchange's fill price in the published state",
      15_000,
    );
  });

  it('a target reached closes the position, and its stop is cancelled at the exchange', async () => {
    const { bybit, authKey, published } = await start('bybit-target');
    const entry = await postSignal(server.url, authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000');
    expect((await outcome(entry)).status).toBe('executed');
    bybit.setPrice('BTCUSDT', 51000);
    expect(bybit.state().positions).toEqual([]);
    // Bybit cancels the reduce-only stop itself once the position is closed: nothing is left open.
    await waitUntil(
      async () => (await published())?.positions?.length === 0,
      'the position gone from the published state',
      15_000,
    );
    expect(bybit.state().openOrders).toEqual([]);
    const stop = bybit.state().orders.find((o) => o.orderLinkId === `${clientOrderId(entry, 'p1r0')}s`)!;
    expect(stop.orderStatus).toBe('Deactivated');
    expect(bybit.state().wallet).toBeCloseTo(10_000 + 0.01 * (51000 - 50000.1), 6);
  });

  it("two positions on one side: the one whose target filled has its stop cancelled by the agent, on Bybit's plain cancel endpoint", async () => {
    const { bybit, authKey, published } = await start('bybit-two');
    const first = await postSignal(server.url, authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000');
    expect((await outcome(first)).status).toBe('executed');
    const second = await postSignal(server.url, authKey, 'BTCUSDT,buy,vol=0.02,sl_price=48000,tp_price=52000');
    expect((await outcome(second)).status).toBe('executed');
    const stop = bybit.state().openOrders.find((o) => o.orderLinkId === `${clientOrderId(first, 'p1r0')}s`)!;
    bybit.setPrice('BTCUSDT', 51000);
    expect(bybit.state().positions).toMatchObject([{ symbol: 'BTCUSDT', size: 0.02 }]);
    await waitUntil(
      () => bybit.state().orders.find((o) => o.orderId === stop.orderId)?.orderStatus === 'Deactivated',
      "the first position's stop cancelled",
      15_000,
    );
    // A conditional order on a contract is cancelled by its id alone: no orderFilter, no `trigger`.
    expect(bybit.requests('POST', '/v5/order/cancel').map((r) => r.params)).toEqual([
      { symbol: 'BTCUSDT', orderId: stop.orderId, category: 'linear' },
    ]);
    expect(
      bybit
        .state()
        .openOrders.map((o) => [o.orderLinkId, o.triggerPrice, o.price, o.qty])
        .sort(),
    ).toEqual(
      [
        [`${clientOrderId(second, 'p2r0')}s`, 48000, 0, 0.02],
        [`${clientOrderId(second, 'p2r0')}t1`, 0, 52000, 0.02],
      ].sort(),
    );
    // The second position alone (a snapshot stored before the second signal holds the first alone).
    await waitUntil(
      async () => {
        const positions = (await published())?.positions;
        return positions?.length === 1 && positions[0].position === 2;
      },
      'the second position alone in the published state',
      15_000,
    );
    // Open orders are read in one listing, conditional ones with the plain ones.
    expect(bybit.requests('GET', '/v5/order/realtime').filter((r) => r.params.orderFilter !== undefined)).toEqual([]);
  });

  it("a stop reached fills at the exchange's price: the trade in the ledger closes there, with the exchange's fees", async () => {
    const { bybit, authKey, published, trades } = await start('bybit-stop');
    const fees = await fetch(`${bybit.url}_control/fees?maker=0.0002&taker=0.00055`, { method: 'POST' });
    expect(fees.status).toBe(200);
    const entry = await postSignal(server.url, authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000');
    expect((await outcome(entry)).status).toBe('executed');
    // Below the trigger at once: the conditional market sell fills at the bid, 48900.
    bybit.setPrice('BTCUSDT', 48900);
    expect(bybit.state().positions).toEqual([]);
    await waitUntil(async () => (await trades())[0]?.exitAt != null, 'the closed trade in the ledger', 30_000);
    // Bought at the ask 50000.1 (taker 0.055 %: 0.27500055), sold at 48900 (0.268950).
    expect((await trades())[0]).toMatchObject({
      side: 'long',
      lots: 0.01,
      entryPrice: 50000.1,
      exitPrice: 48900,
      fees: 0.54395055,
    });
    await waitUntil(async () => (await published())?.positions?.length === 0, 'no position published', 15_000);
    expect(bybit.state().openOrders).toEqual([]);
  });

  it('a pending entry standing at start-up is followed (acknowledged look-ups), and fills into a position with its stop', async () => {
    const { bybit, authKey, agent, run } = await start('bybit-pending');
    const entry = await postSignal(server.url, authKey, 'BTCUSDT,buylimit,vol=0.01,entry_price=49900,sl_price=49000');
    expect(await outcome(entry)).toMatchObject({ status: 'executed' });
    expect(bybit.state().openOrders.map((o) => o.orderLinkId)).toEqual([clientOrderId(entry, 'o')]);
    await agent.stop();
    const again = await run();
    bybit.setPrice('BTCUSDT', 49900);
    await waitUntil(
      () => bybit.state().openOrders.some((o) => o.reduceOnly && o.triggerPrice === 49000),
      'the stop placed once the entry filled',
      20_000,
    );
    expect(bybit.state().positions).toEqual([{ symbol: 'BTCUSDT', size: 0.01, avgPrice: 49900 }]);
    expect(again.lines().filter((l) => l.level >= 50)).toEqual([]);
  });

  it('funding booked on an open long is in its trade in the ledger, paid and received', async () => {
    const { bybit, authKey, trades } = await start('bybit-funding', ['--funding-every', '1']);
    const entry = await postSignal(server.url, authKey, 'BTCUSDT,buy,vol=0.01');
    expect((await outcome(entry)).status).toBe('executed');
    await waitUntil(async () => (await trades()).length === 1, 'the opening fill in the ledger', 30_000);
    // A long of 0.01 BTC at the mark price 50000, rate +0.01 %: it pays 0.05 USDT (execFee +0.05).
    expect(bybit.applyFunding('BTCUSDT', 0.0001)!.execFee).toBe('0.05000000');
    await waitUntil(async () => (await trades())[0]?.funding === -0.05, 'the payment in the trade', 30_000);
    // Rate −0.02 % at 51000: the long receives 0.102 USDT (execFee −0.102).
    bybit.setPrice('BTCUSDT', 51000);
    expect(bybit.applyFunding('BTCUSDT', -0.0002)!.execFee).toBe('-0.10200000');
    await waitUntil(async () => (await trades())[0]?.funding === 0.052, 'both payments in the trade', 30_000);
    const reads = bybit.requests('GET', '/v5/execution/list').filter((r) => r.params.execType === 'Funding');
    expect(reads.every((r) => r.params.limit === '100' && r.params.startTime !== undefined)).toBe(true);
  });
});
