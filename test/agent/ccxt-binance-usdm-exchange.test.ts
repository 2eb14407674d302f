import { describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { FakeAlgoOrder, FakeOrder } from '../fakes/binance-usdm-exchange.js';
import { BINANCE_USDM, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';

/**
 * A real `signalgate agent --venue ccxt --exchange binanceusdm` process against the stateful
 * Binance USDⓈ-M test exchange (test/fakes/binance-usdm-exchange.ts, written from Binance's
 * published rules), reached through `--proxy-url`. The exchange fills and triggers by its own
 * rules as prices move; what it holds is read from its state, what the agent believes from the
 * published state and the signal log.
 */
interface ExchangeState {
  wallet: number;
  unrealized: number;
  positions: { symbol: string; amount: number; entryPrice: number }[];
  orders: FakeOrder[];
  openOrders: FakeOrder[];
  openAlgoOrders: FakeAlgoOrder[];
}

describe('a real agent process on the Binance USDⓈ-M test exchange', () => {
  const bed = useCcxtAgentBed(BINANCE_USDM);
  const start = async (name: string) => {
    const source = await bed.start(name);
    return { source, agent: source.agent, run: source.run, published: source.published };
  };
  const held = () => bed.exchange.state() as unknown as ExchangeState;
  const control = bed.control;
  const outcome = (signal: string) => bed.outcome(signal);
  /** The price through `price` and back within a fraction of a second: between two of the agent's reads. */
  const spike = async (price: number, back: number) => {
    await control('price', `symbol=BTCUSDT&price=${price}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await control('price', `symbol=BTCUSDT&price=${back}`);
  };

  it('start-up loads the USDⓈ-M markets only, neither the wallet coins nor the margin pairs', async () => {
    await start('usdm-startup');
    expect(bed.exchange.requests('GET', '/fapi/v1/exchangeInfo')).toHaveLength(1);
    expect(
      bed.exchange.received
        .filter((r) => r.path.startsWith('/sapi/') || r.path.startsWith('/api/') || r.path.startsWith('/dapi/'))
        .map((r) => r.path),
    ).toEqual([]);
  });

  it('a target the exchange fills in a spike between two reads closes the position, and its stop is cancelled at the exchange', async () => {
    const { source, published } = await start('usdm-spike');
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect(await outcome(entry)).toMatchObject({
      status: 'executed',
      message: expect.stringContaining('opened buy 0.01 BTC/USDT:USDT at 50000.1'),
    });
    expect(held().openAlgoOrders.map((o) => o.clientAlgoId)).toEqual([`${clientOrderId(entry, 'p1r0')}s`]);

    await spike(51000, 50000);
    expect(held().positions).toEqual([]);
    await waitUntil(() => held().openAlgoOrders.length === 0, 'the stop cancelled at the exchange', 8000);
    await waitUntil(
      async () => (await published())?.positions?.length === 0,
      'the position gone from the published state',
      8000,
    );
    expect(held().openOrders).toEqual([]);
    // The profit is the exchange's: filled at the target's 51000.
    expect(held().wallet).toBeCloseTo(10_000 + 0.01 * (51000 - 50000.1), 6);
  });

  it('two positions on one side: the one whose target filled loses its stop, the other keeps its stop and target', async () => {
    const { source, published } = await start('usdm-two');
    const first = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect((await outcome(first)).status).toBe('executed');
    const second = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.02,sl_price=48000,tp_price=52000',
    );
    expect((await outcome(second)).status).toBe('executed');
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.03 }]);

    await spike(51000, 50000);
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.02 }]);
    await waitUntil(() => held().openAlgoOrders.length === 1, "the first position's stop cancelled", 8000);
    expect(held().openAlgoOrders.map((o) => [o.clientAlgoId, o.triggerPrice, o.quantity])).toEqual([
      [`${clientOrderId(second, 'p2r0')}s`, 48000, 0.02],
    ]);
    expect(held().openOrders.map((o) => [o.clientOrderId, o.price, o.origQty])).toEqual([
      [`${clientOrderId(second, 'p2r0')}t1`, 52000, 0.02],
    ]);
    // The second position alone: a snapshot is sent at most every 250 ms, so the one stored may
    // still be the first position's alone, from before the second signal.
    await waitUntil(
      async () => {
        const positions = (await published())?.positions;
        return positions?.length === 1 && positions[0].position === 2;
      },
      'the second position alone in the published state',
      8000,
    );
    expect((await published()).positions).toMatchObject([{ position: 2, volume: 0.02, sl: 48000 }]);
  });

  it('balance is the wallet and equity the wallet plus the unrealized profit, counted once', async () => {
    const { source, published } = await start('usdm-balance');
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01');
    expect((await outcome(entry)).status).toBe('executed');
    // 0.01 BTC bought at 50000.1, marked at 50250: 2.499 of open profit.
    await control('price', 'symbol=BTCUSDT&price=50250');
    const { wallet } = held();
    await waitUntil(
      async () =>
        (await published())?.equity !== undefined && Math.abs((await published()).equity - (wallet + 2.499)) < 1e-6,
      'the equity published',
      20_000,
    );
    expect(await published()).toMatchObject({ balance: wallet, currency: 'USDT' });
  });

  /** What the agent publishes of the symbol's positions: [volume, sl] each. */
  const positionsOf = async (published: () => Promise<{ positions?: { volume: number; sl: number }[] }>) =>
    ((await published())?.positions ?? []).map((p) => [p.volume, p.sl]);
  const stops = () => held().openAlgoOrders.map((o) => [o.quantity, o.triggerPrice]);

  it('a limit entry the exchange fills in parts is a position of the lots filled, with its stop for them, growing as it fills', async () => {
    const { source, published } = await start('usdm-parts');
    await control('thin', 'symbol=BTCUSDT&qty=0.004');
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buylimit,vol=0.01,entry_price=49900,sl_price=49000,tp_price=51000',
    );
    expect((await outcome(entry)).status).toBe('executed');
    expect(held().openOrders.map((o) => [o.status, o.executedQty])).toEqual([['NEW', 0]]);

    await control('price', 'symbol=BTCUSDT&price=49900');
    expect(held().openOrders.map((o) => [o.status, o.executedQty])).toEqual([['PARTIALLY_FILLED', 0.004]]);
    await waitUntil(async () => (await positionsOf(published)).length === 1, 'the filled lots published', 8000);
    expect(await positionsOf(published)).toEqual([[0.004, 49000]]);
    await waitUntil(() => stops().length === 1, 'the stop placed for the filled lots', 8000);
    expect(stops()).toEqual([[0.004, 49000]]);
    // The rest still stands, pending in the book with the lots not filled.
    expect((await published()).orders).toMatchObject([{ volume: 0.006 }]);

    await control('price', 'symbol=BTCUSDT&price=49890');
    expect(
      held()
        .openOrders.filter((o) => !o.reduceOnly)
        .map((o) => o.executedQty),
    ).toEqual([0.008]);
    await waitUntil(async () => (await positionsOf(published))[0]?.[0] === 0.008, 'the position grown', 8000);
    await waitUntil(() => stops().length === 1 && stops()[0]![0] === 0.008, 'the stop resized', 8000);
    expect(stops()).toEqual([[0.008, 49000]]);

    await control('price', 'symbol=BTCUSDT&price=49880');
    await waitUntil(async () => (await positionsOf(published))[0]?.[0] === 0.01, 'the whole entry filled', 8000);
    await waitUntil(() => stops().length === 1 && stops()[0]![0] === 0.01, 'the stop for all the lots', 8000);
    await waitUntil(async () => (await published()).orders.length === 0, 'no pending order left', 8000);
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.01 }]);
    // The target closes all of it.
    expect(
      held()
        .openOrders.filter((o) => o.reduceOnly)
        .map((o) => [o.origQty, o.price]),
    ).toEqual([[0.01, 51000]]);
  });

  it('a partly filled entry cancelled by a signal leaves the filled lots as a protected position, and the outcome says how much filled', async () => {
    const { source, published } = await start('usdm-parts-cancel');
    await control('thin', 'symbol=BTCUSDT&qty=0.004');
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buylimit,vol=0.01,entry_price=49900,sl_price=49000',
    );
    expect((await outcome(entry)).status).toBe('executed');
    await control('price', 'symbol=BTCUSDT&price=49900');
    await control('price', 'symbol=BTCUSDT&price=49895');
    expect(held().openOrders.map((o) => [o.status, o.executedQty])).toEqual([['PARTIALLY_FILLED', 0.008]]);

    const cancel = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,cancellong');
    expect(await outcome(cancel)).toMatchObject({
      status: 'executed',
      message: expect.stringContaining('had filled 0.008 of its 0.01 lots when it was cancelled'),
    });
    expect(held().orders.find((o) => !o.reduceOnly)).toMatchObject({ status: 'CANCELED', executedQty: 0.008 });
    // The position of 0.008 stood before the cancel (the fill in part): a snapshot from before the
    // cancel shows it beside the pending rest, so both are waited for in one snapshot.
    await waitUntil(
      async () => (await positionsOf(published))[0]?.[0] === 0.008 && (await published()).orders.length === 0,
      'the filled lots kept, the entry gone',
      8000,
    );
    await waitUntil(() => stops().length === 1 && stops()[0]![0] === 0.008, 'their stop', 8000);
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.008 }]);
  });

  it('a partly filled entry the exchange expires leaves the filled lots as a protected position', async () => {
    const { source, published } = await start('usdm-parts-expire');
    await control('thin', 'symbol=BTCUSDT&qty=0.004');
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buylimit,vol=0.01,entry_price=49900,sl_price=49000',
    );
    expect((await outcome(entry)).status).toBe('executed');
    await control('price', 'symbol=BTCUSDT&price=49900');
    await waitUntil(async () => (await positionsOf(published))[0]?.[0] === 0.004, 'the filled lots published', 8000);
    await waitUntil(() => stops().length === 1, 'their stop', 8000);
    await control('expire', 'symbol=BTCUSDT');
    expect(held().orders.find((o) => !o.reduceOnly)).toMatchObject({ status: 'EXPIRED', executedQty: 0.004 });
    await waitUntil(
      async () => (await positionsOf(published))[0]?.[0] === 0.004 && (await published()).orders.length === 0,
      'the filled lots kept, the entry gone',
      8000,
    );
    expect(stops()).toEqual([[0.004, 49000]]);
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.004 }]);
  });

  // The venue lists the stop (an algo order) among the agent's own open orders; the start's
  // reconciliation cancels the orders of a position gone at the venue.
  it('after a restart, a position the exchange closed while the agent was away leaves the book and its stop is cancelled', async () => {
    const { source, agent, run, published } = await start('usdm-away');
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect((await outcome(entry)).status).toBe('executed');
    await agent.kill();
    await control('close', 'symbol=BTCUSDT');
    // The target was reduce-only in the matching engine: it expired with the position. The stop stands.
    expect(held().openOrders).toEqual([]);
    expect(held().openAlgoOrders).toHaveLength(1);

    await run();
    await waitUntil(() => held().openAlgoOrders.length === 0, 'the orphaned stop cancelled', 6000);
    await waitUntil(async () => (await published())?.positions?.length === 0, 'no position published', 10_000);
  });
});
