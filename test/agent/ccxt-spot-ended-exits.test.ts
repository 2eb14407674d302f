import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { SpotOrder, SpotRequest } from '../fakes/binance-spot-exchange.js';
import { BINANCE_SPOT, useCcxtAgentBed, type CcxtAgent } from '../support/ccxt-agent-bed.js';
import { expectSaidAsExit } from './support/said-as-exit.js';

/**
 * A spot position's stop or target that ended while the agent did not look, on an account that
 * holds more of the coin than the book (the trader's own BTC): the coins cannot tell a stop that
 * filled from one cancelled, so the agent looks the order up by its id before placing anything in
 * its stead. Real `signalgate agent --venue ccxt --exchange binance --market spot` processes on
 * the Binance spot test exchange.
 */
interface Held {
  balances: Record<string, { free: number; locked: number }>;
  orders: SpotOrder[];
  openOrders: SpotOrder[];
}

const SPOT = ['--market', 'spot', '--reconcile-every', '1'];
/** The trader's own BTC, beside the position's 0.01. */
const OWN_BTC = 1;

describe('a spot stop or target ended unseen, the trader holding more of the coin than the book', () => {
  const bed = useCcxtAgentBed(BINANCE_SPOT);
  const held = () => bed.exchange.state() as unknown as Held;
  const trades = async (source: CcxtAgent) =>
    (await bed.server.admin('GET', `/api/admin/ledger/trades?accountId=${source.accountId}`)).body.trades as any[];
  const posts = () => bed.exchange.requests('POST', '/api/v3/order');
  const until = async (source: CcxtAgent, condition: (state: any) => boolean, what: string) => {
    try {
      await waitUntil(async () => condition(await source.published()), what, 20_000);
    } catch (error) {
      throw new Error(
        `${(error as Error).message}\nexchange: ${JSON.stringify({ ...held(), orders: undefined })}\npublished: ${JSON.stringify(await source.published())}\nlog: ${source.agent.stdout.slice(-3000)}`,
      );
    }
  };

  /** A buy of 0.01 BTC with `exit` standing, the account holding OWN_BTC more. */
  const openLong = async (name: string, exit: string, orders = 1) => {
    const source = await bed.start(name, { args: SPOT });
    await bed.control('balance', `asset=BTC&total=${OWN_BTC}`);
    const entry = await postSignal(bed.server.url, source.authKey, `BTCUSDT,buy,vol=0.01,${exit}`);
    expect((await bed.outcome(entry)).status).toBe('executed');
    expect(held().openOrders).toHaveLength(orders);
    await until(source, (state) => state?.positions?.length === 1, 'the position published');
    return { source, order: held().openOrders[0]! };
  };

  it('killed, its stop filled meanwhile: the restart closes the position by that fill, places no stop, and the ledger has the exit once', async () => {
    const { source, order: stop } = await openLong('ended-stop-filled', 'sl_price=49000');
    expect(stop).toMatchObject({ type: 'STOP_LOSS', origQty: 0.01 });
    await source.agent.kill();
    await bed.control('price', 'symbol=BTCUSDT&price=48900');
    expect(held().orders.find((o) => o.orderId === stop.orderId)?.status).toBe('FILLED');
    expect(held().balances.BTC).toEqual({ free: OWN_BTC, locked: 0 });
    // Back above the stop's level: a stop placed again would stand, and sell the trader's coins when reached.
    await bed.control('price', 'symbol=BTCUSDT&price=50000');
    const placed = posts().length;

    await source.run();
    await until(source, (state) => state?.positions?.length === 0, 'the position closed');
    // Looked up by its id, not placed again; the trader's coins left alone.
    const lookups = bed.exchange.requests('GET', '/api/v3/order').map((r) => r.params.orderId);
    expect(lookups).toContain(String(stop.orderId));
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(posts()).toHaveLength(placed);
    expect(held().openOrders).toEqual([]);
    expect(held().balances.BTC).toEqual({ free: OWN_BTC, locked: 0 });
    expectSaidAsExit(source.agent);
    await waitUntil(
      async () => (await trades(source)).some((t) => t.exitAt !== null),
      'the exit in the ledger',
      30_000,
    );
    expect(await trades(source)).toEqual([expect.objectContaining({ lots: 0.01, exitPrice: 48900 })]);
  });

  it('killed, its stop filled in part and the rest expired meanwhile (a thin book): the part an exit in the ledger, a stop for the rest placed once, said at error', async () => {
    const { source, order: stop } = await openLong('ended-stop-part', 'sl_price=49000');
    await source.agent.kill();
    // The book holds 0.004 at the bid: the stop's market order takes it, and the rest expires.
    await bed.control('thin', 'symbol=BTCUSDT&qty=0.004');
    await bed.control('price', 'symbol=BTCUSDT&price=48900');
    expect(held().orders.find((o) => o.orderId === stop.orderId)).toMatchObject({
      status: 'EXPIRED',
      executedQty: 0.004,
    });
    expect(held().balances.BTC).toEqual({ free: OWN_BTC + 0.006, locked: 0 });
    await bed.control('thin', 'symbol=BTCUSDT&qty=0');
    await bed.control('price', 'symbol=BTCUSDT&price=50000');
    const placed = posts().length;

    await source.run();
    await until(source, () => held().openOrders.length === 1, 'a stop for the rest');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(posts()).toHaveLength(placed + 1);
    expect(held().openOrders).toEqual([
      expect.objectContaining({ type: 'STOP_LOSS', side: 'SELL', stopPrice: 49000, origQty: 0.006 }),
    ]);
    expect(held().balances.BTC).toEqual({ free: OWN_BTC, locked: 0.006 });
    expect((await source.published()).positions).toEqual([expect.objectContaining({ volume: 0.006, sl: 49000 })]);
    await waitUntil(
      async () => (await trades(source)).some((t) => t.exitAt !== null),
      'the partial exit in the ledger',
      30_000,
    );
    const ledger = await trades(source);
    expect(ledger).toHaveLength(2);
    expect(ledger).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ lots: 0.004, exitPrice: 48900 }),
        expect.objectContaining({ lots: 0.006, exitAt: null }),
      ]),
    );
    expect(source.agent.lines().filter((l) => l.level >= 40)).toEqual([
      expect.objectContaining({
        level: 50,
        msg: expect.stringContaining(
          `the stop order ${stop.orderId} of position 1 filled 0.004 lots, then ended at the venue (cancelled or expired): the 0.006 lots left had no stop there`,
        ),
      }),
    ]);
  });

  it('running, its stop filled between two passes: the position closed by that fill, no stop placed again', async () => {
    // The stop placed in this run is followed already (the reports found its fill before this
    // change too): the guard that the look-ups of every reconciliation change nothing here.
    const { source, order: stop } = await openLong('ended-stop-running', 'sl_price=49000');
    const placed = posts().length;
    await bed.control('price', 'symbol=BTCUSDT&price=48900');
    expect(held().orders.find((o) => o.orderId === stop.orderId)?.status).toBe('FILLED');
    await until(source, (state) => state?.positions?.length === 0, 'the position closed');
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(posts()).toHaveLength(placed);
    expect(held().openOrders).toEqual([]);
    expect(held().balances.BTC).toEqual({ free: OWN_BTC, locked: 0 });
    expect(source.agent.lines().filter((l) => l.level >= 40)).toEqual([]);
    await waitUntil(
      async () => (await trades(source)).some((t) => t.exitAt !== null),
      'the exit in the ledger',
      30_000,
    );
    expect(await trades(source)).toEqual([expect.objectContaining({ lots: 0.01, exitPrice: 48900 })]);
  });

  it('stopped, a target filled in part and the rest cancelled meanwhile: the position keeps what is left, and the next target takes it', async () => {
    const { source, order: first } = await openLong('ended-target-part', 'tp1_price=52000,tp2_price=53000', 2);
    expect(held().openOrders).toEqual([
      expect.objectContaining({ type: 'LIMIT', side: 'SELL', price: 52000, origQty: 0.005 }),
      expect.objectContaining({ type: 'LIMIT', side: 'SELL', price: 53000, origQty: 0.005 }),
    ]);
    await source.agent.stop();
    await bed.control('fill', `orderId=${first.orderId}&qty=0.004`);
    await bed.control('cancel', `orderId=${first.orderId}`);
    expect(held().balances.BTC?.free).toBeCloseTo(OWN_BTC + 0.001, 8);
    expect(held().balances.BTC?.locked).toBe(0.005);

    await source.run();
    await until(
      source,
      (state) =>
        state?.positions?.[0]?.volume === 0.006 &&
        held().openOrders.length === 1 &&
        held().openOrders[0]!.origQty === 0.006,
      'the position of 0.006 with its target',
    );
    expect(held().openOrders).toEqual([
      expect.objectContaining({ type: 'LIMIT', side: 'SELL', price: 53000, origQty: 0.006 }),
    ]);
    expect(held().balances.BTC).toEqual({ free: OWN_BTC, locked: 0.006 });
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(held().openOrders).toHaveLength(1);
    expect((await source.published()).positions.map((p: any) => p.volume)).toEqual([0.006]);
    expect(source.agent.lines().filter((l) => l.level >= 50)).toEqual([]);
  });

  it('its stop cancelled at the website meanwhile: placed again, said at error', async () => {
    const { source, order: stop } = await openLong('ended-stop-cancelled', 'sl_price=49000');
    await source.agent.kill();
    await bed.control('cancel', `orderId=${stop.orderId}`);

    await source.run();
    await until(source, () => held().openOrders.length === 1, 'the stop placed again');
    expect(held().openOrders).toEqual([
      expect.objectContaining({ type: 'STOP_LOSS', side: 'SELL', stopPrice: 49000, origQty: 0.01 }),
    ]);
    expect(held().balances.BTC).toEqual({ free: OWN_BTC, locked: 0.01 });
    expect(
      source.agent
        .lines()
        .filter((l) => l.level >= 50)
        .map((l) => l.msg),
    ).toEqual([expect.stringContaining('none of the stop and target orders of position')]);
  });

  it('its stop filled meanwhile and the look-up unanswered at the restart: nothing placed until the exchange answers it', async () => {
    const { source, order: stop } = await openLong('ended-lookup-fails', 'sl_price=49000');
    await source.agent.kill();
    await bed.control('price', 'symbol=BTCUSDT&price=48900');
    await bed.control('price', 'symbol=BTCUSDT&price=50000');
    const placed = posts().length;
    // Every look-up of the order is cut off (a network failure) until the test lets them through.
    let cut = 0;
    bed.exchange.onMoment((request: SpotRequest, moment) => {
      if (moment !== 'arrived' || request.method !== 'GET' || request.path !== '/api/v3/order') return undefined;
      cut += 1;
      return 'drop';
    });
    const ready = source.run();
    await waitUntil(() => cut >= 2, 'the look-up tried again', 20_000);
    expect(posts()).toHaveLength(placed);
    bed.exchange.onMoment(null);
    await ready;
    await until(source, (state) => state?.positions?.length === 0, 'the position closed');
    expect(bed.exchange.requests('GET', '/api/v3/order').map((r) => r.params.orderId)).toContain(String(stop.orderId));
    await new Promise((resolve) => setTimeout(resolve, 2000));
    expect(posts()).toHaveLength(placed);
    expect(held().openOrders).toEqual([]);
    expect(held().balances.BTC).toEqual({ free: OWN_BTC, locked: 0 });
  });
});
