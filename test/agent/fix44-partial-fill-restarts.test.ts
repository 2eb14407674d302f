import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { protectionAt, useFix44Bed } from './support/fix44-bed.js';

/**
 * Restarts at a plain FIX 4.4 broker (no position ids, no mass status, no positions report): what
 * happened while the agent was away reaches it by the broker's resend of the ExecutionReports it
 * missed and by the OrderStatusRequest it sends at start for each unfinished order of its record.
 * Whatever the moment the agent stopped, the restarted one ends with what the broker holds: a
 * pending entry's filled lots as its position, protected by one stop and one target of those
 * lots, the rest cancelled, and no order sent twice.
 */
describe('restarts at a plain FIX 4.4 broker (partial fills, orders unanswered)', () => {
  const bed = useFix44Bed();
  let agent: AgentProcess;

  const placed = (clOrdId: string) => bed.sent('D').filter((m) => m.ClOrdID === clOrdId).length;
  /** The orders working at the broker that protect the signal's position (ClOrdIDs share the signal's prefix): side, type, price, units. */
  const protection = (entryId: string) => protectionAt(bed.broker, entryId);
  const protectionsSent = (entryId: string) =>
    bed.sent('D').filter((m) => String(m.ClOrdID).startsWith(entryId.slice(0, 18)) && m.ClOrdID !== entryId).length;

  /** Posts a buy limit of 0.05 at 1.104 (stop 30 pips, target 50) and waits until it works at the broker and shows in the published state. */
  const pendingEntry = async () => {
    const signal = await postSignal(
      bed.server.url,
      bed.authKey,
      'EURUSD,buylimit,vol=0.05,entry_price=1.104,sl_pips=30,tp_pips=50',
    );
    const delivery = await bed.settled(signal);
    expect(delivery.message).toMatch(/^placed buy limit 0\.05 EURUSD at 1\.104/);
    await waitUntil(async () => (await bed.state())?.orders?.length === 1, 'the pending order in the published state');
    return { signal, entryId: clientOrderId(signal, 'o') };
  };

  /** What the restarted agent must end with: 0.02 filled of the entry, its rest cancelled, one stop and one target of 0.02. */
  const reconciled = async (entryId: string) => {
    await waitUntil(() => bed.broker.order(entryId)?.status === '4', 'the rest of the entry cancelled at the broker');
    expect(bed.broker.order(entryId)).toMatchObject({ cumUnits: 2000, avgPx: 1.1039 });
    expect(placed(entryId)).toBe(1);
    await waitUntil(() => protection(entryId).length === 2, 'the stop and target working at the broker');
    expect(protection(entryId)).toEqual([
      ['sell', '2', 1.109, 2000],
      ['sell', '3', 1.101, 2000],
    ]);
    expect(protectionsSent(entryId)).toBe(2);
    await waitUntil(async () => {
      const state = await bed.state();
      return state?.connected === true && state.orders?.length === 0 && state.positions?.length === 1;
    }, 'the filled lots as the one position in the published state, and no pending order');
    expect((await bed.state()).positions).toMatchObject([{ side: 'buy', volume: 0.02, price: 1.1039, sl: 1.101 }]);
  };

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  beforeEach(async () => {
    bed.broker.holdCancels = false;
    bed.broker.gapFillOnly = false;
  });

  /** Closes what the previous case left (each case starts flat, so the published state is this case's alone). */
  const flatten = async () => {
    if (((await bed.state())?.positions ?? []).length === 0) return;
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closelong');
    await bed.settled(signal);
    await waitUntil(async () => (await bed.state())?.positions?.length === 0, 'no position in the published state');
  };

  it('a pending entry filled in part while the agent is stopped: the restart learns it (resend and order status), protects the lots and cancels the rest', async () => {
    const { entryId } = await pendingEntry();
    await agent.stop();
    // The broker fills 0.02 of the 0.05 while nobody is logged on: its report waits for the resend.
    bed.broker.fill(entryId, 2000, 1.1039);

    agent = await bed.startReady();
    // The start asked the broker for the entry's status.
    expect(bed.sent('H').map((m) => m.ClOrdID)).toContain(entryId);
    await reconciled(entryId);
    const opened = await agent.waitForLog(
      (l) => l.msg === 'account event' && l.event?.type === 'opened',
      'the opening in the log',
    );
    expect(opened.event).toMatchObject({ volume: 0.02, requested: 0.05, price: 1.1039, sl: 1.101, tp: 1.109 });
    // One fill of 0.02, though both the resent report and the status answer told it.
    expect(
      agent
        .lines()
        .filter((l) => l.msg === 'venue report' && l.report?.order?.clientId === entryId)
        .map((l) => l.report.order),
    ).toMatchObject([{ filled: 0.02, volume: 0.05, average: 1.1039, fills: [{ volume: 0.02, price: 1.1039 }] }]);
    expect(agent.handled()).toHaveLength(0);
  }, 120_000);

  it('filled in part while the agent is stopped at a broker whose resend gap-fills: the order status alone tells the fill, and the restart protects it and cancels the rest', async () => {
    await flatten();
    const { entryId } = await pendingEntry();
    await agent.stop();
    bed.broker.gapFillOnly = true;
    bed.broker.fill(entryId, 2000, 1.1039);

    agent = await bed.startReady();
    await reconciled(entryId);
    const opened = await agent.waitForLog(
      (l) => l.msg === 'account event' && l.event?.type === 'opened',
      'the opening in the log',
    );
    expect(opened.event).toMatchObject({ volume: 0.02, requested: 0.05, price: 1.1039 });
    expect(agent.handled()).toHaveLength(0);
  }, 120_000);

  it('killed the moment the broker receives a NewOrderSingle, its answer never replayed (the resend gap-fills): the restart finds the order by status and sends it not again', async () => {
    await flatten();
    bed.broker.gapFillOnly = true;
    const placing = bed.killAgentWhenBrokerReceives(agent, (type, m) => type === 'D' && m.OrdType === '2');
    const signal = await postSignal(
      bed.server.url,
      bed.authKey,
      'EURUSD,buylimit,vol=0.05,entry_price=1.104,sl_pips=30,tp_pips=50',
    );
    const entryId = String((await placing).ClOrdID);
    expect(entryId).toBe(clientOrderId(signal, 'o'));
    expect(bed.broker.order(entryId)).toMatchObject({ status: '0', units: 5000 });

    agent = await bed.startReady();
    expect(bed.sent('H').filter((m) => m.ClOrdID === entryId).length).toBeGreaterThan(0);
    // The signal, never acknowledged, is executed by the restarted agent: with the order the broker holds.
    const delivery = await bed.settled(signal);
    expect(delivery.message).toMatch(/^placed buy limit 0\.05 EURUSD at 1\.104/);
    expect(placed(entryId)).toBe(1);
    await waitUntil(async () => (await bed.state())?.orders?.length === 1, 'the pending order in the published state');
    expect(bed.broker.working().filter((o) => o.clOrdId === entryId)).toHaveLength(1);
    bed.broker.gapFillOnly = false;

    // The broker still fills it and the restarted agent makes it the position, as any fill.
    bed.broker.fill(entryId, 2000, 1.1039);
    await reconciled(entryId);
  }, 120_000);

  it("killed while the cancel of a partly filled entry's rest is unanswered: the restart cancels it again and protects the filled lots once", async () => {
    await flatten();
    const killed = agent;
    const from = killed.lines().length;
    const { entryId } = await pendingEntry();
    bed.broker.holdCancels = true;
    const cancelling = bed.killAgentWhenBrokerReceives(killed, (type, m) => type === 'F' && m.OrigClOrdID === entryId);
    bed.broker.fill(entryId, 2000, 1.1039);
    await cancelling;
    bed.broker.holdCancels = false;
    expect(bed.sent('F').filter((m) => m.OrigClOrdID === entryId)).toHaveLength(1);
    expect(bed.broker.order(entryId)).toMatchObject({ status: '1', cumUnits: 2000 });

    agent = await bed.startReady();
    // The rest is cancelled before the agent says it is ready.
    expect(bed.sent('F').filter((m) => m.OrigClOrdID === entryId)).toHaveLength(2);
    expect(bed.broker.order(entryId)?.status).toBe('4');
    await reconciled(entryId);
    const openings = [...killed.lines().slice(from), ...agent.lines()].filter(
      (l) => l.msg === 'account event' && l.event?.type === 'opened',
    );
    expect(openings.map((l) => l.event)).toMatchObject([{ volume: 0.02, requested: 0.05, price: 1.1039 }]);
    expect(agent.handled()).toHaveLength(0);
  }, 120_000);
});
