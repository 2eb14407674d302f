import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { EURUSD, useCTraderBed } from './support/ctrader-bed.js';

/**
 * A pending entry partly filled across an agent restart, at the cTrader-style broker (which
 * resends nothing: each logon resets the sequence numbers, so what happened while the agent was
 * away is learnt from its position and order status requests). Whatever the moment the agent
 * stopped, the restarted one ends with the position it holds at the broker: the filled lots, in
 * its book and published state, protected by one stop and one target of exactly those lots,
 * the entry's rest cancelled, the entry never placed again, and the opening logged as the lots
 * filled of those asked.
 */
describe('a pending entry partly filled across an agent restart (cTrader-style FIX 4.4)', () => {
  const bed = useCTraderBed();
  let agent: AgentProcess;

  /** The broker's orders tied to a position: kind, price, units. */
  const held = (positionId: string) =>
    [...bed.broker.resting.values()].filter((o) => o.positionId === positionId).map((o) => [o.kind, o.price, o.units]);
  const restWorking = (entryId: string) => [...bed.broker.resting.values()].some((o) => o.clOrdId === entryId);
  const placed = (clOrdId: string) => bed.sent('D').filter((m) => m.ClOrdID === clOrdId).length;

  /** Posts a buy limit of 0.05 at 1.104 (stop 30 pips, target 50) and waits until it rests at the broker and in the published state. */
  const pendingEntry = async () => {
    const signal = await postSignal(
      bed.server.url,
      bed.authKey,
      'EURUSD,buylimit,vol=0.05,entry_price=1.104,sl_pips=30,tp_pips=50',
    );
    const delivery = await bed.settled(signal);
    expect(delivery.message).toMatch(/^placed buy limit 0\.05 1 at 1\.104/);
    await waitUntil(async () => (await bed.state())?.orders?.length === 1, 'the pending order in the published state');
    return { signal, entryId: clientOrderId(signal, 'o') };
  };

  /** The broker fills 0.02 of the entry at 1.1039 and keeps its rest working (until cancelled): the new position. */
  const fillPart = () => {
    const before = new Set(bed.broker.positions.keys());
    bed.broker.partialFill = { units: 2000, rest: 'cancel' };
    bed.broker.setPrice(EURUSD, 1.1037, 1.1039);
    const position = [...bed.broker.positions.values()].find((p) => !before.has(p.id))!;
    expect(position).toMatchObject({ side: 'buy', units: 2000, price: 1.1039 });
    return position.id;
  };

  /** What the restarted agent must end with, for the entry and the position its part opened. */
  const reconciled = async (restarted: AgentProcess, entryId: string, positionId: string) => {
    // The rest is cancelled and the filled lots protected before the agent says it is ready.
    expect(restWorking(entryId)).toBe(false);
    // The orders the broker was sent for the position, to tell a re-placement from a new revision.
    const sentFor = bed
      .sent('D')
      .filter((m) => m.PosMaintRptID === positionId)
      .map((m) => m.ClOrdID);
    expect(held(positionId), `orders sent for position ${positionId}: ${sentFor.join(', ')}`).toEqual([
      ['stop', 1.101, 2000],
      ['limit', 1.109, 2000],
    ]);
    expect(bed.broker.positions.get(positionId)).toMatchObject({ units: 2000 });
    expect(placed(entryId)).toBe(1);
    await waitUntil(async () => {
      const state = await bed.state();
      return (
        state?.connected === true &&
        state.orders?.length === 0 &&
        state.positions?.some((p: { volume: number }) => p.volume === 0.02)
      );
    }, 'the filled lots as a position in the published state, and no pending order');
    // The published positions are the broker's, one for one.
    const lots = (list: { volume: number; price: number }[]) => list.map((p) => `${p.volume}@${p.price}`).sort();
    expect(lots((await bed.state()).positions)).toEqual(
      lots([...bed.broker.positions.values()].map((p) => ({ volume: p.units / 100000, price: p.price }))),
    );
    expect(restarted.handled()).toHaveLength(0);
  };

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  beforeEach(() => {
    bed.broker.partialFill = null;
    bed.broker.holdCancels = false;
    bed.broker.setPrice(EURUSD, 1.105, 1.1052);
  });

  it('filled in part while the agent is stopped: the restarted agent takes the fill from the order status, protects it and cancels the rest', async () => {
    const { entryId } = await pendingEntry();
    await agent.stop();
    const positionId = fillPart();
    expect(restWorking(entryId)).toBe(true);

    agent = await bed.startReady();
    await reconciled(agent, entryId, positionId);
    const opened = await agent.waitForLog(
      (l) => l.msg === 'account event' && l.event?.type === 'opened',
      'the opening in the log',
    );
    expect(opened.event).toMatchObject({ volume: 0.02, requested: 0.05, price: 1.1039, sl: 1.101, tp: 1.109 });
    expect(
      agent
        .lines()
        .filter((l) => l.msg === 'venue report' && l.report?.order?.clientId === entryId)
        .map((l) => l.report.order),
    ).toMatchObject([{ filled: 0.02, volume: 0.05, average: 1.1039 }]);
  }, 120_000);

  it('killed after sending the cancel of the rest, before the broker answered: the restarted agent cancels it again and protects the filled lots once', async () => {
    const killed = agent;
    const from = killed.lines().length;
    const { entryId } = await pendingEntry();
    // The broker takes the cancel and stalls; the agent dies the moment the cancel reaches it.
    bed.broker.holdCancels = true;
    const cancelling = bed.killAgentWhenBrokerReceives(killed, (type, m) => type === 'F' && m.OrigClOrdID === entryId);
    const positionId = fillPart();
    await cancelling;
    bed.broker.holdCancels = false;
    expect(bed.sent('F').filter((m) => m.OrigClOrdID === entryId)).toHaveLength(1);
    expect(restWorking(entryId)).toBe(true);

    agent = await bed.startReady();
    expect(bed.sent('F').filter((m) => m.OrigClOrdID === entryId)).toHaveLength(2);
    await reconciled(agent, entryId, positionId);
    // Whichever run put the fill in the book, the log says once what it opened.
    const openings = [...killed.lines().slice(from), ...agent.lines()].filter(
      (l) => l.msg === 'account event' && l.event?.type === 'opened',
    );
    expect(openings.map((l) => l.event)).toMatchObject([{ volume: 0.02, requested: 0.05, price: 1.1039 }]);
  }, 120_000);

  it('killed with the fill protected in its book and the cancel of the rest unanswered: the restart cancels the rest and places nothing again', async () => {
    const { entryId } = await pendingEntry();
    bed.broker.holdCancels = true;
    const positionId = fillPart();
    await waitUntil(() => held(positionId).length === 2, 'the stop and target at the broker');
    // The earlier cases left positions of the same lots, price and stop: the new one is in the
    // published state (which shows only what the journal holds) when every broker position is.
    await waitUntil(async () => {
      const positions: { volume: number; price: number; sl: number | null }[] = (await bed.state())?.positions ?? [];
      return (
        positions.length === bed.broker.positions.size &&
        positions.every((p) => p.volume === 0.02 && p.price === 1.1039 && p.sl === 1.101)
      );
    }, 'the position in the published state');
    const protections = bed.sent('D').filter((m) => m.PosMaintRptID === positionId).length;
    await agent.kill();
    bed.broker.holdCancels = false;
    expect(restWorking(entryId)).toBe(true);

    agent = await bed.startReady();
    await reconciled(agent, entryId, positionId);
    expect(bed.sent('D').filter((m) => m.PosMaintRptID === positionId)).toHaveLength(protections);
    // The book had the fill: the restarted agent does not open it again. (The killed agent's own
    // log line may be lost with it: SIGKILL drops what it had not written out yet.)
    expect(agent.lines().filter((l) => l.msg === 'account event' && l.event?.type === 'opened')).toHaveLength(0);
  }, 120_000);

  it('killed the moment the broker receives the target, before its answer: the restart finds the target standing and places it not again', async () => {
    const { entryId } = await pendingEntry();
    const before = new Set(bed.broker.positions.keys());
    const targeting = bed.killAgentWhenBrokerReceives(
      agent,
      (type, m) =>
        type === 'D' &&
        m.PosMaintRptID !== undefined &&
        !before.has(String(m.PosMaintRptID)) &&
        /t1$/.test(String(m.ClOrdID)),
    );
    const positionId = fillPart();
    await targeting;
    const targets = () => bed.sent('D').filter((m) => m.PosMaintRptID === positionId && /t1$/.test(String(m.ClOrdID)));
    expect(targets()).toHaveLength(1);

    agent = await bed.startReady();
    await reconciled(agent, entryId, positionId);
    expect(targets()).toHaveLength(1);
  }, 120_000);
});
