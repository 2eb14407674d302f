import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { SpotOrder } from '../fakes/binance-spot-exchange.js';
import { BINANCE_SPOT, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';

/**
 * Stop moves (breakeven, trailing) on a spot market: a real `signalgate agent --venue ccxt
 * --exchange binance --market spot` process against the Binance spot test exchange. The stop is
 * a plain sell order that locks the coins it sells, so a second stop for the same coins is
 * refused ("insufficient balance"): the move cancels the old stop first, then places the new.
 */
interface ExchangeState {
  openOrders: SpotOrder[];
}

describe('stop moves on the Binance spot test exchange', () => {
  const bed = useCcxtAgentBed(BINANCE_SPOT);
  const held = () => bed.exchange.state() as unknown as ExchangeState;
  const stopAt = (price: number) => () =>
    held().openOrders.length === 1 &&
    held().openOrders[0]!.type === 'STOP_LOSS' &&
    held().openOrders[0]!.stopPrice === price &&
    held().openOrders[0]!.origQty === 0.01;

  const openLong = async (name: string) => {
    const source = await bed.start(name, { args: ['--market', 'spot'] });
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,be_trigger=500',
    );
    expect((await bed.outcome(entry)).message).toContain('opened buy 0.01 BTC/USDT at 50000.01');
    expect(stopAt(49000)()).toBe(true);
    return source;
  };

  it('breakeven: the stop moves to the entry price, one stop standing for the coins', async () => {
    const source = await openLong('spot-breakeven');
    await bed.control('price', 'symbol=BTCUSDT&price=50700');
    await waitUntil(stopAt(50000.01), 'one stop at the entry price', 10_000);
    await waitUntil(
      async () => (await source.published())?.positions?.[0]?.sl === 50000.01,
      'the moved stop published',
      5000,
    );
    expect((await source.published()).positions[0].stopMove).toBeUndefined();
    expect(source.agent.lines().filter((l) => l.level >= 40)).toEqual([]);
  });

  it('the new stop refused after the old one was cancelled: the book holds none for it, and the protection pass places it again', async () => {
    const source = await openLong('spot-breakeven-refused');
    await bed.control('fail', 'method=POST&path=/api/v3/order&code=-1013&count=1');
    await bed.control('price', 'symbol=BTCUSDT&price=50700');
    await waitUntil(
      () => source.agent.lines().some((l) => String(l.msg).includes('were cancelled first to free the coins')),
      'the refusal told',
      10_000,
    );
    await waitUntil(stopAt(50000.01), 'the stop placed again at the entry price', 10_000);
    await waitUntil(
      async () => (await source.published())?.positions?.[0]?.sl === 50000.01,
      'the moved stop published',
      5000,
    );
  });
});
