import { beforeAll, describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { BinanceUsdmExchange } from '../fakes/binance-usdm-exchange.js';
import { BINANCE_USDM, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';
import type { TestServer } from '../support/start-test-server.js';

/**
 * A real agent process on the Binance USDⓈ-M test exchange charging Binance's VIP 0 commission
 * (maker 0.02 %, taker 0.05 % of the notional, in USDT): the ledger's trade carries the exchange's
 * fees, read from its account trade list (for fills the exchange made later, from its private
 * stream's events, which carry each fill's commission), the profit net of them, and the quote the
 * agent took the signal at, which gives the slippage.
 */
describe('the ledger of an agent on the Binance USDⓈ-M test exchange with fees', () => {
  const bed = useCcxtAgentBed(BINANCE_USDM);
  let server: TestServer;
  let exchange: BinanceUsdmExchange;
  beforeAll(() => {
    server = bed.server;
  });

  const outcome = (signal: string) => bed.outcome(signal);
  const control = (what: string, query: string) => bed.control(what, query);

  /** An account with one agent on a fresh test exchange charging 0.02 % maker, 0.05 % taker. */
  const start = async (name: string) => {
    const { accountId, authKey, sourceId } = await bed.start(name);
    exchange = bed.exchange;
    await control('fees', 'maker=0.0002&taker=0.0005');
    const trades = async () =>
      (await server.admin('GET', `/api/admin/ledger/trades?accountId=${accountId}`)).body.trades as any[];
    return { accountId, source: { authKey, id: sourceId }, control, trades };
  };

  it('a long opened and closed at the market: fees and realized profit as computed by hand', async () => {
    const { source, control, trades } = await start('usdm-ledger');

    const entry = await postSignal(server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,comment=fees');
    expect(await outcome(entry)).toMatchObject({ status: 'executed' });
    await control('price', 'symbol=BTCUSDT&price=51000');
    const exit = await postSignal(server.url, source.authKey, 'BTCUSDT,closebuy');
    expect(await outcome(exit)).toMatchObject({ status: 'executed' });

    const closed = async () => (await trades()).filter((t) => t.exitAt !== null);
    await waitUntil(async () => (await closed()).length === 1, 'the closed trade in the ledger', 30_000);
    const [trade] = await closed();
    // Bought 0.01 at the ask 50000.1: fee 50000.1 × 0.01 × 0.0005 = 0.2500005 USDT.
    // Sold 0.01 at the bid 51000: fee 51000 × 0.01 × 0.0005 = 0.255 USDT.
    // Profit (51000 − 50000.1) × 0.01 = 9.999, booked by the engine to the cent: 10.00; less
    // the fees 0.5050005: 9.4949995 USDT.
    expect(trade).toMatchObject({
      symbol: 'BTC/USDT:USDT',
      side: 'long',
      lots: 0.01,
      entryPrice: 50000.1,
      exitPrice: 51000,
      fees: 0.5050005,
      realizedProfit: 9.4949995,
      openingSignalId: entry,
      closingSignalIds: [exit],
      strategy: 'fees',
      // The ask the agent held when it took the signal, the one it filled at: no slippage.
      quoteAtReceipt: 50000.1,
    });
  });

  it('a market entry carries the quote the agent took its signal at: the slippage as computed by hand', async () => {
    const { accountId, source, trades } = await start('usdm-slippage');
    // The price moves while the order is on its way (at the moment the exchange receives it): it
    // fills at the new ask, 50100.1, against the ask of 50000.1 the agent held when it took the signal.
    let moved = false;
    exchange.onMoment((request, moment) => {
      if (moved || moment !== 'arrived' || request.method !== 'POST' || request.path !== '/fapi/v1/order') return;
      moved = true;
      exchange.setPrice('BTCUSDT', 50100);
    });
    const entry = await postSignal(server.url, source.authKey, 'BTCUSDT,buy,vol=0.01');
    expect(await outcome(entry)).toMatchObject({ status: 'executed' });
    await waitUntil(async () => (await trades()).length === 1, 'the opening fill in the ledger', 30_000);
    expect((await trades())[0]).toMatchObject({ entryPrice: 50100.1, quoteAtReceipt: 50000.1, openingSignalId: entry });
    // A buy: entry − ask at receipt = 50100.1 − 50000.1 = 100 (worse for the trader: above 0).
    const stats = (await server.admin('GET', `/api/admin/ledger/statistics?accountId=${accountId}`)).body;
    expect(stats.latencyBySource).toEqual([
      expect.objectContaining({ key: source.id, trades: 1, slippage: { count: 1, median: 100, p95: 100 } }),
    ]);
    expect(stats.latencyBySource[0].latencyMs.count).toBe(1);
  });

  it('a limit entry and its target the exchange filled later carry their fees from the private stream', async () => {
    const { source, control, trades } = await start('usdm-later-fees');
    const entry = await postSignal(
      server.url,
      source.authKey,
      'BTCUSDT,buylimit,vol=0.01,entry_price=49000,tp_price=49500,comment=later',
    );
    expect(await outcome(entry)).toMatchObject({ status: 'executed' });
    await control('price', 'symbol=BTCUSDT&price=49000');
    // Learned from the agent's reports: the entry filled at its price, a maker fill.
    await waitUntil(async () => (await trades()).length === 1, 'the later entry fill in the ledger', 30_000);
    // The target stands once the agent placed it for the new position.
    await waitUntil(
      async () => (exchange.state().openOrders as any[]).some((o) => o.side === 'SELL' && o.price === 49500),
      'the target placed',
      30_000,
    );
    await control('price', 'symbol=BTCUSDT&price=49500');
    const closed = async () => (await trades()).filter((t) => t.exitAt !== null);
    await waitUntil(async () => (await closed()).length === 1, 'the target fill in the ledger', 30_000);
    // Entry 49000 × 0.01 × 0.0002 = 0.098 USDT; target (a limit order, maker) 49500 × 0.01 ×
    // 0.0002 = 0.099 USDT; profit (49500 − 49000) × 0.01 = 5.00 less 0.197: 4.803 USDT.
    expect((await closed())[0]).toMatchObject({
      side: 'long',
      lots: 0.01,
      entryPrice: 49000,
      exitPrice: 49500,
      fees: 0.197,
      realizedProfit: 4.803,
      openingSignalId: entry,
      closingSignalIds: [],
      quoteAtReceipt: null,
    });
    // The private stream told both fills with their commission: no read of the trade list for them.
    expect(exchange.requests('GET', '/fapi/v1/userTrades')).toHaveLength(0);
  });

  it("a limit entry placed while the private stream was down has its fee from the fill's own event", async () => {
    const { source, control, trades } = await start('usdm-entry-unseen');
    await waitUntil(async () => exchange.stream.connections === 1, 'the private stream connected', 30_000);
    // The entry is placed while the stream is down (its listenKey asked in vain): the event of
    // its placement reaches no one, only that of its fill.
    let down = true;
    exchange.onMoment((request, moment) =>
      down && moment === 'arrived' && request.path === '/fapi/v1/listenKey' ? 'drop' : undefined,
    );
    await control('stream-drop', '');
    const entry = await postSignal(server.url, source.authKey, 'BTCUSDT,buylimit,vol=0.01,entry_price=49000');
    expect(await outcome(entry)).toMatchObject({ status: 'executed' });
    down = false;
    await waitUntil(async () => exchange.stream.connections === 2, 'the private stream back', 30_000);
    await control('price', 'symbol=BTCUSDT&price=49000');
    await waitUntil(async () => (await trades()).length === 1, 'the entry fill in the ledger', 30_000);
    // 49000 × 0.01 × 0.0002 = 0.098 USDT, as the fill's event told it: no read of the trade list.
    expect((await trades())[0]).toMatchObject({ side: 'long', lots: 0.01, entryPrice: 49000, fees: 0.098 });
    expect(exchange.requests('GET', '/fapi/v1/userTrades')).toHaveLength(0);
  });
});
