import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { filledProtectedLong, protectionAt, useFix44Bed } from './support/fix44-bed.js';

/**
 * A bust (ExecutionReport 150=H, trade cancel) at a plain FIX 4.4 broker: the lots it takes back
 * never were, so the book's position shrinks by them and is protected for what stands, or leaves
 * the book (its stop and target cancelled) when nothing does. Before, the bust was logged and the
 * book kept counting the lots, protected at the broker for lots the account did not hold.
 */
describe('busts at a plain FIX 4.4 broker', () => {
  const bed = useFix44Bed();
  let agent: AgentProcess;

  /** The orders working at the broker that protect the entry's position: side, type, price, units. */
  const protection = (entryId: string) => protectionAt(bed.broker, entryId);

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  it('an entry filled whole, then busted in part and then whole: the position shrinks, is protected for what stands, then leaves the book', async () => {
    const entryId = await filledProtectedLong(bed);
    expect(protection(entryId)).toEqual([
      ['sell', '2', 1.109, 5000],
      ['sell', '3', 1.101, 5000],
    ]);

    // The broker takes back 0.02 of the 0.05: the account holds 0.03.
    bed.broker.bust(entryId, 2000);
    await waitUntil(
      async () => (await bed.state())?.positions?.[0]?.volume === 0.03 && protection(entryId)[0]?.[3] === 3000,
      'the position of 0.03 published, protected for 0.03 at the broker',
    );
    expect(bed.broker.netUnits('EURUSD')).toBe(3000);
    expect(protection(entryId)).toEqual([
      ['sell', '2', 1.109, 3000],
      ['sell', '3', 1.101, 3000],
    ]);
    expect((await bed.state()).positions).toMatchObject([{ side: 'buy', volume: 0.03, sl: 1.101 }]);

    // And the rest: nothing stands, so nothing is published nor protected.
    bed.broker.bust(entryId, 3000);
    await waitUntil(
      async () => (await bed.state())?.positions?.length === 0 && protection(entryId).length === 0,
      'no position published, and its stop and target cancelled at the broker',
    );
    expect(bed.broker.netUnits('EURUSD')).toBe(0);
    expect((await bed.state()).notManaged ?? []).toEqual([]);
    expect(agent.lines().filter((l) => l.level >= 50)).toEqual([]);
  }, 120_000);

  it('a market entry busted whole: the position leaves the book, its stop and target cancelled at the broker', async () => {
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.04,sl_pips=30,tp_pips=50');
    expect((await bed.settled(signal)).message).toMatch(/^opened buy 0\.04 EURUSD at 1\.1052/);
    const entryId = clientOrderId(signal, 'o');
    await waitUntil(() => protection(entryId).length === 2, 'the stop and target of the market entry');

    bed.broker.bust(entryId, 4000);
    await waitUntil(
      async () => (await bed.state())?.positions?.length === 0 && protection(entryId).length === 0,
      'no position published, and its stop and target cancelled at the broker',
    );
    expect(bed.broker.netUnits('EURUSD')).toBe(0);
    expect(agent.lines().filter((l) => l.level >= 50)).toEqual([]);
  }, 120_000);
});
