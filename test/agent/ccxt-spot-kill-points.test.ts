import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { deliveriesOf, postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { SpotOrder, SpotRequest } from '../fakes/binance-spot-exchange.js';
import { BINANCE_SPOT, useCcxtAgentBed, type CcxtAgent } from '../support/ccxt-agent-bed.js';
import { readJournal } from './support/journal-file.js';

/**
 * Kill points on a spot market: a real `signalgate agent --venue ccxt --exchange binance
 * --market spot` process on the Binance spot test exchange. The coins of a position are locked
 * by its stop, so a close or a stop move cancels the stop first, then sends the sell or the new
 * stop. The agent is SIGKILLed between the two (in the exchange's hook, as the second request
 * arrives: it is dropped, never carried out, and so is every request until the restart), then
 * started again: the coins end protected by one stop of what is held, or sold once.
 */
interface Held {
  balances: Record<string, { free: number; locked: number }>;
  orders: SpotOrder[];
  openOrders: SpotOrder[];
}

const SPOT = ['--market', 'spot', '--reconcile-every', '1'];
const posted = (suffix: string) => (r: SpotRequest) =>
  r.method === 'POST' &&
  r.path === '/api/v3/order' &&
  new RegExp(`^sg[0-9a-f]{16}${suffix}$`).test(r.params.newClientOrderId ?? '');

describe('a spot agent killed between cancelling the stop and the order that follows, and started again', () => {
  const bed = useCcxtAgentBed(BINANCE_SPOT);
  const held = () => bed.exchange.state() as unknown as Held;
  const journal = (source: CcxtAgent) => {
    const agentDir = path.join(source.dir, 'agents', readdirSync(path.join(source.dir, 'agents'))[0]!);
    const file = readdirSync(agentDir).find((f) => f.startsWith('venue-') && f.endsWith('.json'))!;
    return readJournal(path.join(agentDir, file));
  };
  /** Waits for `condition`, failing with what the exchange and the agent's published state then show. */
  const until = async (source: CcxtAgent, condition: (state: any) => boolean, what: string) => {
    try {
      await waitUntil(async () => condition(await source.published()), what, 20_000);
    } catch (error) {
      const state = await source.published();
      throw new Error(
        `${(error as Error).message}\nexchange: ${JSON.stringify({ ...held(), orders: undefined })}\npublished: ${JSON.stringify(state)}\nlog: ${source.agent.stdout.slice(-3000)}`,
      );
    }
  };

  /** A buy of 0.01 BTC with its stop standing (it locks the 0.01 BTC). */
  const openLong = async (name: string, extra = '') => {
    const source = await bed.start(name, { args: SPOT });
    const entry = await postSignal(bed.server.url, source.authKey, `BTCUSDT,buy,vol=0.01,sl_price=49000${extra}`);
    expect((await bed.outcome(entry)).status).toBe('executed');
    expect(held().openOrders).toEqual([
      expect.objectContaining({ type: 'STOP_LOSS', side: 'SELL', stopPrice: 49000, origQty: 0.01 }),
    ]);
    await until(source, (state) => state?.positions?.length === 1, 'the position published');
    return { source, entry, stop: held().openOrders[0]! };
  };

  /** Kills the agent as the first request `match` takes arrives (dropped, and every one after it until the restart). */
  const killAt = (source: CcxtAgent, match: (r: SpotRequest) => boolean) => {
    const killed = source.agent;
    let done = false;
    bed.exchange.onMoment((request, moment) => {
      if (done) return moment === 'arrived' ? 'drop' : undefined;
      if (moment !== 'arrived' || !match(request)) return undefined;
      done = true;
      process.kill(killed.child.pid!, 'SIGKILL');
      return 'drop';
    });
    return async () => {
      await killed.exited;
      expect(done, 'the agent was killed at the request').toBe(true);
      bed.exchange.onMoment(null);
    };
  };

  it('a close: killed after the stop was cancelled, before the market sell; started again, it sells the coins once', async () => {
    const { source, stop } = await openLong('spot-kill-close');
    const dead = killAt(source, posted('c1'));
    const exit = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,closebuy');
    await dead();
    // The stop is gone, the coins free, nothing sold, and the journal still has the close in flight.
    expect(held().orders.find((o) => o.orderId === stop.orderId)?.status).toBe('CANCELED');
    expect(held().openOrders).toEqual([]);
    expect(held().balances.BTC).toEqual({ free: 0.01, locked: 0 });
    expect(journal(source).inFlight).toContain(exit);

    await source.run();
    const closed = await bed.outcome(exit);
    expect(closed.status).toBe('executed');
    expect(closed.message).toContain('closed');
    await until(
      source,
      (state) => state?.positions?.length === 0 && state.orders.length === 0 && state.notManaged.length === 0,
      'the book empty',
    );
    // Sold once, all of it; no order left standing.
    const sells = held().orders.filter((o) => o.side === 'SELL' && o.type === 'MARKET');
    expect(sells).toEqual([
      expect.objectContaining({ clientOrderId: clientOrderId(exit, 'c1'), origQty: 0.01, status: 'FILLED' }),
    ]);
    expect(held().openOrders).toEqual([]);
    expect(held().balances.BTC).toEqual({ free: 0, locked: 0 });
    expect(await deliveriesOf(bed.server, exit)).toHaveLength(1);
    // Before the close was carried out again the restart found the stop gone and said so.
    expect(
      source.agent
        .lines()
        .filter((l) => l.level >= 50)
        .map((l) => l.msg),
    ).toEqual([expect.stringContaining('none of the stop and target orders of position')]);
  });

  it('a breakeven move: killed after the old stop was cancelled, before the new one; started again, one stop at the entry price', async () => {
    const { source, stop } = await openLong('spot-kill-move', ',be_trigger=500');
    const ticket: number = (await source.published()).positions[0].position;
    const dead = killAt(source, posted('p\\d+r1s'));
    await bed.control('price', 'symbol=BTCUSDT&price=50700');
    await dead();
    expect(held().orders.find((o) => o.orderId === stop.orderId)?.status).toBe('CANCELED');
    expect(held().openOrders).toEqual([]);
    expect(held().balances.BTC).toEqual({ free: 0.01, locked: 0 });
    expect(journal(source).book.protection[String(ticket)].moving, 'the move written down before the kill').toBe(1);

    await source.run();
    await until(
      source,
      (state) =>
        state?.positions?.[0]?.sl === 50000.01 &&
        state.positions[0].stopMove === undefined &&
        state.positions[0].unprotected === undefined &&
        held().openOrders.length === 1,
      'the stop at the entry price, at the venue and published',
    );
    expect(held().openOrders).toEqual([
      expect.objectContaining({ type: 'STOP_LOSS', side: 'SELL', stopPrice: 50000.01, origQty: 0.01 }),
    ]);
    expect(held().balances.BTC).toEqual({ free: 0, locked: 0.01 });
    expect(held().orders.filter((o) => o.type === 'MARKET' && o.side === 'SELL')).toEqual([]);
    expect((await source.published()).positions).toMatchObject([{ symbol: 'BTC/USDT', volume: 0.01 }]);
  });

  it('killed with nothing in flight, its stop cancelled at the exchange meanwhile: the restart finds it gone, says so and places it again', async () => {
    const { source, stop } = await openLong('spot-kill-stop-gone');
    await source.agent.kill();
    await bed.control('cancel', `orderId=${stop.orderId}`);
    expect(held().balances.BTC).toEqual({ free: 0.01, locked: 0 });

    await source.run();
    await until(
      source,
      (state) => state?.positions?.[0]?.sl === 49000 && held().openOrders.length === 1,
      'the stop placed again',
    );
    expect(held().openOrders).toEqual([
      expect.objectContaining({ type: 'STOP_LOSS', side: 'SELL', stopPrice: 49000, origQty: 0.01 }),
    ]);
    expect(held().openOrders[0]!.orderId).not.toBe(stop.orderId);
    expect(held().balances.BTC).toEqual({ free: 0, locked: 0.01 });
    expect(
      source.agent
        .lines()
        .filter((l) => l.level >= 50)
        .map((l) => l.msg),
    ).toEqual([expect.stringContaining('none of the stop and target orders of position')]);
    // Found once: the next comparisons see the new stop standing.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(held().openOrders).toHaveLength(1);
    expect(source.agent.lines().filter((l) => l.level >= 40)).toHaveLength(1);
    expect((await source.published()).positions[0].unprotected).toBeUndefined();
  });
});
