import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { filledProtectedLong, protectingOrder, protectionAt, useFix44Bed } from './support/fix44-bed.js';

/**
 * A bust of an exit's fill (ExecutionReport 150=H on a stop or a target) at a plain FIX 4.4
 * broker: the lots it closed are held again, so the position comes back into the book as the
 * broker holds it, the book's balance gives back the close's profit, and the position is protected
 * again under new client ids. Before, the bust was logged at error and the book stayed
 * flat while the broker held the lots, unprotected.
 */
describe('busts of exit fills at a plain FIX 4.4 broker', () => {
  const bed = useFix44Bed();
  let agent: AgentProcess;

  /** The orders working at the broker that protect the entry's position: side, type, price, units. */
  const protection = (entryId: string) => protectionAt(bed.broker, entryId);
  const orderOf = (entryId: string, ordType: '2' | '3') => protectingOrder(bed.broker, entryId, ordType);

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  it('a stop filled and then busted: the position is published again, protected anew at the broker', async () => {
    const entryId = await filledProtectedLong(bed);

    // The broker's stop fills: the position leaves the book, its target is cancelled.
    const stop = orderOf(entryId, '3');
    bed.broker.fill(stop.clOrdId, 5000, 1.101);
    await waitUntil(
      async () => (await bed.state())?.positions?.length === 0 && protection(entryId).length === 0,
      'the position closed by its stop, the target cancelled',
    );

    // The broker takes the stop's fill back: the account holds the 0.05 again.
    bed.broker.bust(stop.clOrdId, 5000);
    await waitUntil(
      async () => (await bed.state())?.positions?.length === 1 && protection(entryId).length === 2,
      'the position back in the book, with a stop and target at the broker again',
    );
    expect(bed.broker.netUnits('EURUSD')).toBe(5000);
    expect(protection(entryId)).toEqual([
      ['sell', '2', 1.109, 5000],
      ['sell', '3', 1.101, 5000],
    ]);
    // New client ids: the busted stop's own id stands at the broker no more.
    expect(orderOf(entryId, '3').clOrdId).not.toBe(stop.clOrdId);
    const state = await bed.state();
    expect(state.positions).toMatchObject([{ side: 'buy', volume: 0.05, price: 1.104, sl: 1.101 }]);
    await agent.waitForLog(
      (l) => l.level === 40 && /took back 0\.05 lots of the fill of stop order .* holds 0\.05 lots again/.test(l.msg),
      'the bust said at warn',
    );
    expect(agent.lines().filter((l) => l.level >= 50)).toEqual([]);

    // The restored position lives on: its new stop fills and closes it once.
    bed.broker.fill(orderOf(entryId, '3').clOrdId, 5000, 1.101);
    await waitUntil(
      async () => (await bed.state())?.positions?.length === 0 && protection(entryId).length === 0,
      'the restored position closed by its new stop',
    );
    expect(bed.broker.netUnits('EURUSD')).toBe(0);
  }, 120_000);

  it('a close signal filled and then busted: the position comes back, protected again', async () => {
    const opening = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.04,sl_pips=30,tp_pips=50');
    expect((await bed.settled(opening)).message).toMatch(/^opened buy 0\.04 EURUSD at 1\.1052/);
    const entryId = clientOrderId(opening, 'o');
    await waitUntil(() => protection(entryId).length === 2, 'the stop and target of the market entry');
    const close = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy');
    expect((await bed.settled(close)).message).toMatch(/^closed/);
    await waitUntil(() => protection(entryId).length === 0, 'the stop and target cancelled with the close');

    bed.broker.bust(clientOrderId(close, 'c1'), 4000);
    await waitUntil(
      async () => (await bed.state())?.positions?.length === 1 && protection(entryId).length === 2,
      'the position back in the book, with a stop and target at the broker again',
    );
    expect(bed.broker.netUnits('EURUSD')).toBe(4000);
    expect(protection(entryId)).toEqual([
      ['sell', '2', 1.1102, 4000],
      ['sell', '3', 1.1022, 4000],
    ]);
    expect((await bed.state()).positions).toMatchObject([{ side: 'buy', volume: 0.04, price: 1.1052, sl: 1.1022 }]);
    expect(agent.lines().filter((l) => l.level >= 50)).toEqual([]);

    // Closed again, once: the broker is flat.
    const again = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy');
    expect((await bed.settled(again)).message).toMatch(/^closed/);
    await waitUntil(async () => (await bed.state())?.positions?.length === 0, 'the position closed again');
    expect(bed.broker.netUnits('EURUSD')).toBe(0);
  }, 120_000);

  it('a target filled in part, the agent restarted, then the fill busted: the position grows back to its lots, protected for all of them', async () => {
    const signal = await postSignal(
      bed.server.url,
      bed.authKey,
      'EURUSD,buylimit,vol=0.1,entry_price=1.104,sl_pips=30,tp1_pips=50,pct1=50,tp2_pips=80,pct2=50',
    );
    expect((await bed.settled(signal)).message).toMatch(/^placed buy limit 0\.1 EURUSD/);
    const entryId = clientOrderId(signal, 'o');
    bed.broker.fill(entryId, 10000, 1.104);
    await waitUntil(() => protection(entryId).length === 3, 'the stop and two targets at the broker');

    const first = bed.broker
      .working()
      .find((o) => o.clOrdId.startsWith(entryId.slice(0, 18)) && o.ordType === '2' && o.price === 1.109)!;
    bed.broker.fill(first.clOrdId, 5000, 1.109);
    await waitUntil(
      async () => (await bed.state())?.positions?.[0]?.volume === 0.05 && protection(entryId).length === 2,
      'the position reduced to 0.05 by its first target, protected for 0.05',
    );

    // What the fill did is in the journal: a restart in between does not lose it.
    expect((await agent.stop()).code).toBe(0);
    agent = await bed.startReady();
    bed.broker.bust(first.clOrdId, 5000);
    await waitUntil(
      async () => (await bed.state())?.positions?.[0]?.volume === 0.1 && protection(entryId).length === 3,
      'the position back at 0.1, with the stop and both targets again',
    );
    expect(bed.broker.netUnits('EURUSD')).toBe(10000);
    expect(protection(entryId)).toEqual([
      ['sell', '2', 1.109, 5000],
      ['sell', '2', 1.112, 5000],
      ['sell', '3', 1.101, 10000],
    ]);
  }, 120_000);
});
