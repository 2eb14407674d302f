import { describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { SpotOrder } from '../fakes/binance-spot-exchange.js';
import { BINANCE_SPOT, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';

/**
 * A real `signalgate agent --venue ccxt --exchange binance --market spot` process against the
 * stateful Binance spot test exchange (test/fakes/binance-spot-exchange.ts), through
 * `--proxy-url`. A spot account holds coins, not positions: the book's buy positions of a coin
 * must be covered by what the account holds of it, free or locked (docs/venues/ccxt.md).
 */
interface ExchangeState {
  balances: Record<string, { free: number; locked: number }>;
  openOrders: SpotOrder[];
}

const SPOT = ['--market', 'spot', '--reconcile-every', '1'];
const GONE = 'the account no longer holds the BTC of this position';

describe('a real agent process on the Binance spot test exchange: the book covered by the coins', () => {
  const bed = useCcxtAgentBed(BINANCE_SPOT);
  const held = () => bed.exchange.state() as unknown as ExchangeState;
  const positionsOf = async (published: () => Promise<any>) =>
    ((await published())?.positions ?? []).map((p: any) => [p.position, p.volume]);

  it('a buy whose coins were sold at the website leaves the book within a reconciliation period; its stop is not placed again', async () => {
    const source = await bed.start('spot-sold', { args: SPOT });
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000');
    expect(await bed.outcome(entry)).toMatchObject({ status: 'executed' });
    const [stop] = held().openOrders;
    expect(stop).toMatchObject({ clientOrderId: `${clientOrderId(entry, 'p1r0')}s`, type: 'STOP_LOSS', side: 'SELL' });
    expect(held().balances.BTC).toEqual({ free: 0, locked: 0.01 });
    await waitUntil(async () => (await positionsOf(source.published)).length === 1, 'the position published', 8000);

    // The trader cancels the stop (it locks the coins) and sells the coins at the website.
    await bed.control('cancel', `orderId=${stop!.orderId}`);
    await bed.control('sell', 'symbol=BTCUSDT&qty=0.01');
    const line = await source.agent.waitForLog((l) => String(l.msg).startsWith(GONE), 'the position dropped', 10_000);
    expect(line).toMatchObject({ level: 40, position: 1, symbol: 'BTC/USDT', side: 'buy', volume: 0.01 });
    await waitUntil(async () => (await positionsOf(source.published)).length === 0, 'the position unpublished', 8000);
    // Its stop was cancelled once (gone already: the exchange says so), and none placed again.
    const cancels = bed.exchange.requests('DELETE', '/api/v3/order');
    expect(cancels.map((r) => r.params.orderId)).toEqual([String(stop!.orderId)]);
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(held().openOrders).toEqual([]);
    expect(bed.exchange.requests('POST', '/api/v3/order')).toHaveLength(2);
    expect((await source.published()).notManaged).toEqual([]);
  });

  it('of two buys, the one whose coins are free goes when they are sold; the one whose stop locks its coins keeps it', async () => {
    const source = await bed.start('spot-two', { args: SPOT });
    const bare = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01');
    expect(await bed.outcome(bare)).toMatchObject({ status: 'executed' });
    const guarded = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000');
    expect(await bed.outcome(guarded)).toMatchObject({ status: 'executed' });
    expect(held().balances.BTC).toEqual({ free: 0.01, locked: 0.01 });

    await bed.control('sell', 'symbol=BTCUSDT&qty=0.01');
    await source.agent.waitForLog(
      (l) => String(l.msg).startsWith(GONE) && l.position === 1,
      'position 1 dropped',
      10_000,
    );
    await waitUntil(
      async () => JSON.stringify(await positionsOf(source.published)) === JSON.stringify([[2, 0.01]]),
      'only position 2 published',
      8000,
    );
    expect(held().openOrders.map((o) => o.clientOrderId)).toEqual([`${clientOrderId(guarded, 'p2r0')}s`]);
    expect(bed.exchange.requests('DELETE', '/api/v3/order')).toEqual([]);
  });

  it('after a restart, a buy whose stop filled while the agent was down leaves the book, closed by that fill', async () => {
    const source = await bed.start('spot-restart', { args: SPOT });
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000');
    expect(await bed.outcome(entry)).toMatchObject({ status: 'executed' });
    await waitUntil(async () => (await positionsOf(source.published)).length === 1, 'the position published', 8000);
    await source.agent.kill();

    // The stop fills while the agent is down: the coins are sold.
    await bed.control('price', 'symbol=BTCUSDT&price=48900');
    expect(held().balances.BTC).toEqual({ free: 0, locked: 0 });
    expect(held().openOrders).toEqual([]);

    // Looked up by its id at the restart: the stop's fill closes the position (at its price), not the coin cut.
    const agent = await source.run();
    const closed = await agent.waitForLog(
      (l) => l.msg === 'account event' && l.event?.type === 'closed',
      'the position closed by its stop',
      10_000,
    );
    expect(closed.event).toMatchObject({ position: 1, price: 48900 });
    await waitUntil(async () => (await positionsOf(source.published)).length === 0, 'the position unpublished', 8000);
    expect(held().openOrders).toEqual([]);
    expect(agent.lines().filter((l) => String(l.msg).startsWith(GONE))).toEqual([]);
  });

  it("coins the account holds beyond the book's are the trader's: no position not managed, none at error, the book's kept", async () => {
    const source = await bed.start('spot-beyond', { args: SPOT });
    for (const [asset, total] of [
      ['BTC', 1],
      ['ETH', 2],
      ['BNB', 3],
    ] as const)
      await bed.control('balance', `asset=${asset}&total=${total}`);
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000');
    expect(await bed.outcome(entry)).toMatchObject({ status: 'executed' });
    // The trader sells some of their own coins: the book's 0.01 is still covered.
    await bed.control('sell', 'symbol=BTCUSDT&qty=0.5');
    await new Promise((resolve) => setTimeout(resolve, 3500));
    const published = await source.published();
    expect(published.positions.map((p: any) => p.volume)).toEqual([0.01]);
    expect(published.notManaged).toEqual([]);
    expect(source.agent.lines().filter((l) => l.level >= 50)).toEqual([]);
    expect(held().openOrders).toHaveLength(1);
  });
});
