import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { filledProtectedLong, protectingOrder, protectionAt, useFix44Bed } from './support/fix44-bed.js';

/**
 * The ledger's trades when a plain FIX 4.4 broker takes a fill back (ExecutionReport 150=H): the
 * agent reports the bust through its ledger outbox, and the trades API no longer counts the fill.
 * Before, the busted fill stayed in the trades and their profit.
 */
describe('busts in the ledger, through a real agent at a plain FIX 4.4 broker', () => {
  const bed = useFix44Bed();
  let agent: AgentProcess;

  const trades = async () =>
    (await bed.server.admin('GET', `/api/admin/ledger/trades?accountId=${bed.accountId}`)).body.trades as any[];
  const shape = (list: any[]) => list.map((t) => [t.side, t.lots, t.entryPrice, t.exitPrice, t.realizedProfit]);
  const stopOf = (entryId: string) => protectingOrder(bed.broker, entryId, '3');

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  it('a stop filled then busted: the trade is open again; after a restart its new stop closes it once', async () => {
    const entryId = await filledProtectedLong(bed);

    // The stop fills: 0.05 lots × (1.101 − 1.104) × 100,000 = −15.
    const stop = stopOf(entryId);
    bed.broker.fill(stop.clOrdId, 5000, 1.101);
    await waitUntil(async () => (await trades()).some((t) => t.exitAt !== null), 'the closed trade in the ledger');
    expect(shape(await trades())).toEqual([['long', 0.05, 1.104, 1.101, -15]]);

    // The broker takes the stop's fill back: the trade is open again, without its loss.
    bed.broker.bust(stop.clOrdId, 5000);
    await waitUntil(async () => (await trades())[0]?.exitAt === null, 'the trade open again in the ledger');
    expect(shape(await trades())).toEqual([['long', 0.05, 1.104, null, null]]);

    // A restart sends nothing twice; the position's new stop closes the trade once.
    expect((await agent.stop()).code).toBe(0);
    agent = await bed.startReady();
    await waitUntil(() => protectionAt(bed.broker, entryId).length === 2, 'the position protected after the restart');
    bed.broker.fill(stopOf(entryId).clOrdId, 5000, 1.101);
    await waitUntil(async () => (await trades())[0]?.exitAt != null, 'the trade closed by its new stop');
    expect(shape(await trades())).toEqual([['long', 0.05, 1.104, 1.101, -15]]);
    const statistics = (await bed.server.admin('GET', `/api/admin/ledger/statistics?accountId=${bed.accountId}`)).body;
    expect(statistics.statistics).toMatchObject({ trades: 1, netProfit: -15 });
  }, 120_000);

  it('a market entry busted in part, then whole: its trade shrinks, then leaves the ledger', async () => {
    const before = (await trades()).length;
    const opening = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.04,sl_pips=30,tp_pips=50');
    expect((await bed.settled(opening)).message).toMatch(/^opened buy 0\.04 EURUSD/);
    await waitUntil(async () => (await trades()).length === before + 1, 'the market entry in the ledger');
    expect((await trades()).filter((t) => t.exitAt === null).map((t) => [t.lots, t.entryPrice])).toEqual([
      [0.04, 1.1052],
    ]);

    bed.broker.bust(clientOrderId(opening, 'o'), 1000);
    await waitUntil(
      async () => (await trades()).some((t) => t.exitAt === null && t.lots === 0.03),
      'the trade down to 0.03 lots',
    );
    bed.broker.bust(clientOrderId(opening, 'o'), 3000);
    await waitUntil(async () => (await trades()).length === before, 'the busted entry gone from the ledger');
    expect((await trades()).filter((t) => t.exitAt === null)).toEqual([]);
    expect(agent.lines().filter((l) => l.level >= 50)).toEqual([]);
  }, 120_000);
});
