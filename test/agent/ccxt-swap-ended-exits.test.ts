import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { FakeAlgoOrder, FakeOrder } from '../fakes/binance-usdm-exchange.js';
import { BINANCE_USDM, useCcxtAgentBed, type CcxtAgent } from '../support/ccxt-agent-bed.js';
import { expectSaidAsExit } from './support/said-as-exit.js';

/**
 * A swap position's stop that ended while the agent was down (killed): the positions listed tell
 * only that the position closed, not at what price, so the agent looks the stop up by its id (on
 * Binance USDⓈ-M its algo order, then the order it placed) before the book is compared with them.
 * Real `signalgate agent --venue ccxt --exchange binanceusdm` processes on the Binance USDⓈ-M test
 * exchange, charging Binance's VIP 0 commission (maker 0.02 %, taker 0.05 %).
 */
interface Held {
  positions: { symbol: string; amount: number }[];
  orders: FakeOrder[];
  openOrders: FakeOrder[];
  algoOrders: FakeAlgoOrder[];
  openAlgoOrders: FakeAlgoOrder[];
}

const ARGS = ['--reconcile-every', '1'];

describe('a swap stop ended while the agent was down', () => {
  const bed = useCcxtAgentBed(BINANCE_USDM);
  const held = () => bed.exchange.state() as unknown as Held;
  const trades = async (source: CcxtAgent) =>
    (await bed.server.admin('GET', `/api/admin/ledger/trades?accountId=${source.accountId}`)).body.trades as any[];
  /** Orders sent: plain ones and conditional ones. */
  const placed = () =>
    bed.exchange.requests('POST', '/fapi/v1/order').length + bed.exchange.requests('POST', '/fapi/v1/algoOrder').length;
  const lookUps = (algoId: number) =>
    bed.exchange.requests('GET', '/fapi/v1/algoOrder').filter((r) => r.params.algoId === String(algoId));
  const until = async (source: CcxtAgent, condition: (state: any) => boolean, what: string) => {
    try {
      await waitUntil(async () => condition(await source.published()), what, 20_000);
    } catch (error) {
      throw new Error(
        `${(error as Error).message}\nexchange: ${JSON.stringify(held())}\npublished: ${JSON.stringify(await source.published())}\nlog: ${source.agent.stdout.slice(-3000)}`,
      );
    }
  };

  /** The long of 0.01 held at the exchange, and published protected by a stop at 49000. */
  const expectProtectedLong = async (source: CcxtAgent) => {
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.01 }]);
    const published = await source.published();
    expect(published.positions).toEqual([
      expect.objectContaining({ symbol: 'BTC/USDT:USDT', side: 'buy', volume: 0.01, sl: 49000 }),
    ]);
    expect(published.positions[0].unprotected).toBeUndefined();
  };

  /** A long of 0.01 BTC at 50000.1 with `exits` standing, then the agent killed (SIGKILL). */
  const openLongAndKill = async (name: string, exits: string) => {
    const source = await bed.start(name, { args: ARGS });
    await bed.control('fees', 'maker=0.0002&taker=0.0005');
    const entry = await postSignal(bed.server.url, source.authKey, `BTCUSDT,buy,vol=0.01,${exits}`);
    expect((await bed.outcome(entry)).status).toBe('executed');
    await until(source, (state) => state?.positions?.length === 1, 'the position published');
    expect(held().openAlgoOrders).toEqual([
      expect.objectContaining({ orderType: 'STOP_MARKET', side: 'SELL', triggerPrice: 49000, quantity: 0.01 }),
    ]);
    const stop = held().openAlgoOrders[0]!;
    await source.agent.kill();
    return { source, entry, stop };
  };

  it('its stop filled: the restart closes the position by that fill, places nothing, says nothing at warn, and the ledger has the exit with its fees', async () => {
    const { source, entry, stop } = await openLongAndKill('swap-ended-stop-filled', 'sl_price=49000,tp_price=51000');
    await bed.control('price', 'symbol=BTCUSDT&price=48900');
    expect(held().algoOrders.find((o) => o.algoId === stop.algoId)?.algoStatus).toBe('FINISHED');
    expect(held().positions).toEqual([]);
    // The target was reduce-only in the matching engine: it expired with the position.
    expect(held().openOrders).toEqual([]);
    await bed.control('price', 'symbol=BTCUSDT&price=50000');
    const before = placed();

    await source.run();
    await until(source, (state) => state?.positions?.length === 0, 'the position closed');
    // Looked up by its id (the algo order, then the order it placed), not dropped as gone.
    expect(lookUps(stop.algoId).length).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(placed()).toBe(before);
    expect(held().openOrders).toEqual([]);
    expect(held().openAlgoOrders).toEqual([]);
    expectSaidAsExit(source.agent);
    const closed = async () => (await trades(source)).filter((t) => t.exitAt !== null);
    await waitUntil(async () => (await closed()).length === 1, 'the exit in the ledger', 30_000);
    // Bought 0.01 at the ask 50000.1: fee 0.2500005 USDT; the stop sold at the bid 48900: fee
    // 48900 × 0.01 × 0.0005 = 0.2445. Loss (48900 − 50000.1) × 0.01 = −11.001, booked by the
    // engine to the cent: −11.00; less the fees 0.4945005: −11.4945005 USDT.
    expect(await trades(source)).toEqual([
      expect.objectContaining({
        side: 'long',
        lots: 0.01,
        entryPrice: 50000.1,
        exitPrice: 48900,
        fees: 0.4945005,
        realizedProfit: -11.4945005,
        openingSignalId: entry,
      }),
    ]);
  });

  /** The book holds 0.004 at the bid: the stop's market order takes it at 48900, and the rest expires. */
  const stopFillsInPart = async (stop: FakeAlgoOrder) => {
    await bed.control('thin', 'symbol=BTCUSDT&qty=0.004&market=1');
    // In one turn of the event loop: a running agent sees the price back at 50000, where a stop
    // at 49000 can be placed again.
    bed.exchange.setPrice('BTCUSDT', 48900);
    bed.exchange.setPrice('BTCUSDT', 50000);
    const algo = held().algoOrders.find((o) => o.algoId === stop.algoId)!;
    expect(algo.algoStatus).toBe('FINISHED');
    expect(held().orders.find((o) => o.orderId === algo.actualOrderId)).toMatchObject({
      status: 'EXPIRED',
      executedQty: 0.004,
      avgPrice: 48900,
    });
    await bed.control('thin', 'symbol=BTCUSDT&qty=0');
  };

  /**
   * After a stop filled 0.004 of the long's 0.01 and ended: the position 0.006 at the exchange, in
   * the book and the ledger (the 0.004 an exit at 48900), and one stop placed for it, said at error.
   */
  const protectedRest = async (source: CcxtAgent, stop: FakeAlgoOrder, before: number, followed: boolean) => {
    await waitUntil(() => held().openAlgoOrders.length === 1, 'a stop for the rest', 10_000);
    // Three reconciliations more (--reconcile-every 1): looked up once (a running agent follows
    // the stops it placed, too), placed once.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    if (!followed) expect(lookUps(stop.algoId)).toHaveLength(1);
    expect(placed()).toBe(before + 1);
    expect(held().openAlgoOrders).toEqual([
      expect.objectContaining({ orderType: 'STOP_MARKET', side: 'SELL', triggerPrice: 49000, quantity: 0.006 }),
    ]);
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.006 }]);
    const published = await source.published();
    expect(published.positions).toEqual([
      expect.objectContaining({ symbol: 'BTC/USDT:USDT', side: 'buy', volume: 0.006, sl: 49000 }),
    ]);
    expect(published.positions[0].unprotected).toBeUndefined();
    // The part filled is an exit at its fill's price; the rest an open trade.
    const exited = async () => (await trades(source)).filter((t) => t.exitAt !== null);
    await waitUntil(async () => (await exited()).length === 1, 'the partial exit in the ledger', 30_000);
    const ledger = await trades(source);
    expect(ledger).toHaveLength(2);
    expect(ledger).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ side: 'long', lots: 0.004, entryPrice: 50000.1, exitPrice: 48900 }),
        expect.objectContaining({ side: 'long', lots: 0.006, entryPrice: 50000.1, exitAt: null }),
      ]),
    );
    // Said once, at error: the rest stood without a stop at the exchange.
    expect(source.agent.lines().filter((l) => l.level >= 40)).toEqual([
      expect.objectContaining({
        level: 50,
        msg: expect.stringContaining(
          `the stop order ${stop.algoId} of position 1 filled 0.004 lots, then ended at the venue (cancelled or expired): the 0.006 lots left had no stop there; its stop and targets are placed again for them`,
        ),
      }),
    ]);
  };

  it('its stop filled in part, the rest expired (a thin book): the restart takes the part as an exit, and places a stop for the rest once, said at error', async () => {
    const { source, stop } = await openLongAndKill('swap-ended-stop-part', 'sl_price=49000');
    await stopFillsInPart(stop);
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.006 }]);
    expect(held().openAlgoOrders).toEqual([]);
    const before = placed();

    await source.run();
    await protectedRest(source, stop, before, false);
  });

  it('running, its stop filled in part, the rest expired: the part an exit, a stop for the rest placed once, said at error', async () => {
    const source = await bed.start('swap-stop-part-running', { args: ARGS });
    await bed.control('fees', 'maker=0.0002&taker=0.0005');
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000');
    expect((await bed.outcome(entry)).status).toBe('executed');
    await waitUntil(() => held().openAlgoOrders.length === 1, 'the stop', 10_000);
    const stop = held().openAlgoOrders[0]!;
    const before = placed();

    await stopFillsInPart(stop);
    await protectedRest(source, stop, before, true);
  });

  it('its stop filled in part and ended, the stop for the rest refused once at the restart: placed again at the next reconciliation, said at error', async () => {
    const { source, stop } = await openLongAndKill('swap-ended-stop-part-refused', 'sl_price=49000');
    await stopFillsInPart(stop);
    const refusal = encodeURIComponent('Order would immediately trigger.');
    await bed.control('fail', `method=POST&path=/fapi/v1/algoOrder&code=-2021&msg=${refusal}&count=1`);
    const before = placed();

    await source.run();
    await waitUntil(() => held().openAlgoOrders.length === 1, 'a stop for the rest', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 3500));
    // The refused one, then the one standing.
    expect(placed()).toBe(before + 2);
    expect(held().openAlgoOrders).toEqual([
      expect.objectContaining({ orderType: 'STOP_MARKET', side: 'SELL', triggerPrice: 49000, quantity: 0.006 }),
    ]);
    const published = await source.published();
    expect(published.positions).toEqual([expect.objectContaining({ volume: 0.006, sl: 49000 })]);
    expect(published.positions[0].unprotected).toBeUndefined();
    expect(source.agent.lines().filter((l) => l.level >= 40)).toEqual([
      expect.objectContaining({
        level: 50,
        msg: expect.stringContaining(`the stop order ${stop.algoId} of position 1 filled 0.004 lots, then ended`),
      }),
      expect.objectContaining({ level: 40, msg: expect.stringContaining('Order would immediately trigger.') }),
      expect.objectContaining({
        level: 50,
        msg: expect.stringContaining(
          `none of the stop and target orders of position 1 is open at the venue any more, though the venue still holds the position: they are placed again; looked up by id, order ${stop.algoId} ended (cancelled or expired) after filling 0.004 lots, taken as an exit`,
        ),
      }),
    ]);
  });

  /**
   * Killed, its stop ended unfilled at the exchange meanwhile (`meanwhile`): the restart looks the
   * stop up once, finds it ended with nothing filled, and places it again once, at error.
   */
  const placedAgain = async (name: string, meanwhile: (stop: FakeAlgoOrder) => void) => {
    const { source, stop } = await openLongAndKill(name, 'sl_price=49000');
    meanwhile(stop);
    const before = placed();

    await source.run();
    await waitUntil(() => held().openAlgoOrders.length === 1, 'the stop placed again', 10_000);
    // Three reconciliations more (--reconcile-every 1): looked up once, placed once.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(lookUps(stop.algoId)).toHaveLength(1);
    expect(placed()).toBe(before + 1);
    const again = held().openAlgoOrders;
    expect(again).toEqual([
      expect.objectContaining({ orderType: 'STOP_MARKET', side: 'SELL', triggerPrice: 49000, quantity: 0.01 }),
    ]);
    expect(again[0]!.algoId).not.toBe(stop.algoId);
    // The old one's cancel, once the new one stands: gone already (-2011), nothing said of it.
    expect(bed.exchange.requests('DELETE', '/fapi/v1/algoOrder').map((r) => r.params.algoId)).toEqual([
      String(stop.algoId),
    ]);
    // The position kept, protected by the new stop.
    await expectProtectedLong(source);
    expect(await trades(source)).toEqual([expect.objectContaining({ lots: 0.01, exitAt: null })]);
    // Said once, at error, naming the stop found ended.
    expect(source.agent.lines().filter((l) => l.level >= 40)).toEqual([
      expect.objectContaining({
        level: 50,
        msg: expect.stringContaining(
          `none of the stop and target orders of position 1 is open at the venue any more, though the venue still holds the position: they are placed again; looked up by id, order ${stop.algoId} ended with nothing filled`,
        ),
      }),
    ]);
  };

  it('its stop cancelled at the website: the restart looks it up once, finds it cancelled, places it again once at the same price, said at error; the position kept', async () => {
    await placedAgain('swap-ended-stop-cancelled', (stop) => {
      bed.exchange.cancelConditional('BTCUSDT');
      expect(held().algoOrders.find((o) => o.algoId === stop.algoId)?.algoStatus).toBe('CANCELED');
    });
  });

  it('running, its stop cancelled at the website: placed again once at the next reconciliation, said at error', async () => {
    const source = await bed.start('swap-stop-cancelled-running', { args: ARGS });
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000');
    expect((await bed.outcome(entry)).status).toBe('executed');
    await waitUntil(() => held().openAlgoOrders.length === 1, 'the stop', 10_000);
    const stop = held().openAlgoOrders[0]!;
    const before = placed();

    bed.exchange.cancelConditional('BTCUSDT');
    await waitUntil(() => held().openAlgoOrders.length === 1, 'the stop placed again', 10_000);
    await new Promise((resolve) => setTimeout(resolve, 3500));
    expect(placed()).toBe(before + 1);
    expect(held().openAlgoOrders).toEqual([
      expect.objectContaining({ orderType: 'STOP_MARKET', side: 'SELL', triggerPrice: 49000, quantity: 0.01 }),
    ]);
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.01 }]);
    expect(source.agent.lines().filter((l) => l.level >= 40)).toEqual([
      expect.objectContaining({
        level: 50,
        msg: expect.stringContaining(`looked up by id, order ${stop.algoId} ended with nothing filled`),
      }),
    ]);
  });

  it('its stop cancelled and since forgotten by the exchange (-2013): placed again once, as a cancelled one', async () => {
    await placedAgain('swap-ended-stop-unknown', (stop) => {
      bed.exchange.cancelConditional('BTCUSDT');
      bed.exchange.purgeEnded();
      expect(held().algoOrders.find((o) => o.algoId === stop.algoId)).toBeUndefined();
    });
  });
  /**
   * Its stop ended unfilled while its target still stands: the position has no stop at the
   * exchange, though the book names one. The stop and target are placed again (the new ones first,
   * then the old ones cancelled), once, at error: one stop and one target stand.
   */
  const stopGoneTargetStands = async (
    source: CcxtAgent,
    { stop, target, before, followed }: { stop: FakeAlgoOrder; target: FakeOrder; before: number; followed: boolean },
  ) => {
    await waitUntil(
      () => held().openAlgoOrders.length === 1 && held().openAlgoOrders[0]!.algoId !== stop.algoId,
      'the stop placed again',
      10_000,
    );
    // Three reconciliations more (--reconcile-every 1): looked up once (a running agent follows
    // the stops it placed, too), placed once.
    await new Promise((resolve) => setTimeout(resolve, 3500));
    if (!followed) expect(lookUps(stop.algoId)).toHaveLength(1);
    // The new stop and the new target, nothing more.
    expect(placed()).toBe(before + 2);
    expect(held().openAlgoOrders).toEqual([
      expect.objectContaining({ orderType: 'STOP_MARKET', side: 'SELL', triggerPrice: 49000, quantity: 0.01 }),
    ]);
    expect(held().openOrders).toEqual([
      expect.objectContaining({ type: 'LIMIT', side: 'SELL', price: 51000, origQty: 0.01, reduceOnly: true }),
    ]);
    // The old target cancelled once the new one stood; the old stop's cancel: gone already (-2011).
    expect(held().openOrders[0]!.orderId).not.toBe(target.orderId);
    expect(bed.exchange.requests('DELETE', '/fapi/v1/order').map((r) => r.params.orderId)).toEqual([
      String(target.orderId),
    ]);
    expect(bed.exchange.requests('DELETE', '/fapi/v1/algoOrder').map((r) => r.params.algoId)).toEqual([
      String(stop.algoId),
    ]);
    await expectProtectedLong(source);
    // Said once, at error, naming the stop found ended and the target standing.
    expect(source.agent.lines().filter((l) => l.level >= 40)).toEqual([
      expect.objectContaining({
        level: 50,
        msg: expect.stringContaining(
          `the stop order ${stop.algoId} of position 1 is not open at the venue any more, though the venue still holds the position and its target ${target.orderId} still stands`,
        ),
      }),
    ]);
  };

  it('killed, its stop cancelled at the website, its target left open: the restart places one stop again at the same price, one target stands, said at error; nothing placed again after', async () => {
    const { source, stop } = await openLongAndKill('swap-stop-gone-target-stands', 'sl_price=49000,tp_price=51000');
    bed.exchange.cancelConditional('BTCUSDT');
    const [target] = held().openOrders;
    expect(held().openOrders).toHaveLength(1);
    const before = placed();

    await source.run();
    await stopGoneTargetStands(source, { stop, target: target!, before, followed: false });
  });

  it('running, its stop cancelled at the website, its target left open: placed again at the next reconciliation, one stop and one target, said at error', async () => {
    const source = await bed.start('swap-stop-gone-target-stands-running', { args: ARGS });
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect((await bed.outcome(entry)).status).toBe('executed');
    await waitUntil(
      () => held().openAlgoOrders.length === 1 && held().openOrders.length === 1,
      'the stop and target',
      10_000,
    );
    const stop = held().openAlgoOrders[0]!;
    const target = held().openOrders[0]!;
    const before = placed();

    bed.exchange.cancelConditional('BTCUSDT');
    await stopGoneTargetStands(source, { stop, target, before, followed: true });
  });
});
