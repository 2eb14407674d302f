import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { EURUSD, useCTraderBed } from './support/ctrader-bed.js';

/**
 * Orders the cTrader-style broker fills in two parts (ExecType F with OrdStatus 1 and LeavesQty
 * the rest, then the rest filled or cancelled). Whatever lots the broker holds for the agent are
 * in its book and published state at once, and protected by a stop and target of exactly those
 * lots, tied to the position by 721.
 */
describe('partial fills at a cTrader-style FIX 4.4 broker', () => {
  const bed = useCTraderBed();
  let agent: AgentProcess;

  /** The broker's orders tied to a position: kind, price, units. */
  const held = (positionId: string) =>
    [...bed.broker.resting.values()].filter((o) => o.positionId === positionId).map((o) => [o.kind, o.price, o.units]);
  const ours = async (volume: number) =>
    ((await bed.state())?.positions ?? []).find((p: { volume: number }) => p.volume === volume);

  beforeAll(async () => {
    agent = await bed.startReady();
  });

  // Each test on its own: the broker fills whole at the bed's quote until a test says otherwise.
  beforeEach(() => {
    bed.broker.partialFill = null;
    bed.broker.setPrice(EURUSD, 1.105, 1.1052);
  });

  it('a pending entry filled in part: those lots are a protected position at once, and the rest is cancelled', async () => {
    const signal = await postSignal(
      bed.server.url,
      bed.authKey,
      'EURUSD,buylimit,vol=0.05,entry_price=1.104,sl_pips=30,tp_pips=50',
    );
    await bed.settled(signal);
    const entryId = clientOrderId(signal, 'o');
    await waitUntil(async () => (await bed.state())?.orders?.length === 1, 'the pending order in the published state');

    bed.broker.partialFill = { units: 2000, rest: 'cancel' };
    bed.broker.setPrice(EURUSD, 1.1037, 1.1039);
    const [position] = [...bed.broker.positions.values()];
    expect(position).toMatchObject({ side: 'buy', units: 2000, price: 1.1039 });
    // The agent cancels the rest, and protects the 0.02 lots the broker holds.
    await waitUntil(() => bed.sent('F').some((m) => m.OrigClOrdID === entryId), 'the rest cancelled');
    await waitUntil(() => held(position!.id).length === 2, 'the stop and target at the broker');
    expect(held(position!.id)).toEqual([
      ['stop', 1.101, 2000],
      ['limit', 1.109, 2000],
    ]);
    expect([...bed.broker.resting.values()].some((o) => o.clOrdId === entryId)).toBe(false);
    await waitUntil(
      async () =>
        ((s) => (s?.positions ?? []).some((p: { volume: number }) => p.volume === 0.02) && s?.orders?.length === 0)(
          await bed.state(),
        ),
      'the filled lots as a position in the published state',
    );
    expect(await ours(0.02)).toMatchObject({ side: 'buy', price: 1.1039, sl: 1.101 });
    expect(bed.broker.positions.get(position!.id)).toMatchObject({ units: 2000 });
    await agent.waitForLog(
      (l) => l.msg === 'venue report' && l.report?.type === 'entry_filled' && l.report.order?.clientId === entryId,
      'the fill report in the log',
    );
    expect(
      agent.lines().find((l) => l.msg === 'venue report' && l.report?.order?.clientId === entryId)!.report.order,
    ).toMatchObject({ filled: 0.02, volume: 0.05 });
    // The account event says the lots filled of those asked.
    const opened = await agent.waitForLog(
      (l) => l.msg === 'account event' && l.event?.type === 'opened' && l.event.volume === 0.02,
      'the opening in the log',
    );
    expect(opened.event).toMatchObject({ volume: 0.02, requested: 0.05, price: 1.1039 });
  });

  it('a market order filled in two parts: one position of all the lots at their average price, protected for all of them', async () => {
    bed.broker.partialFill = { units: 4000, rest: 'fill', restPrice: 1.1055 };
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40');
    const delivery = await bed.settled(signal);
    bed.broker.partialFill = null;
    const position = [...bed.broker.positions.values()].find((p) => p.units === 10000)!;
    expect(position.price).toBe(1.10538);
    expect(delivery.result.orders[0]).toMatchObject({
      kind: 'market',
      volume: 0.1,
      filled: 0.1,
      average: 1.10538,
      status: 'filled',
      positionId: position.id,
    });
    expect(delivery.message).toMatch(/^opened buy 0\.1 1 at 1\.10538 \(position \d+\)$/);
    expect(delivery.result.orders[0].fills.map((f: { volume: number; price: number }) => [f.volume, f.price])).toEqual([
      [0.04, 1.1052],
      [0.06, 1.1055],
    ]);
    expect(held(position.id).map(([kind, , units]) => [kind, units])).toEqual([
      ['stop', 10000],
      ['limit', 10000],
    ]);
    await waitUntil(async () => (await ours(0.1)) !== undefined, 'the position in the published state');
    expect(await ours(0.1)).toMatchObject({ side: 'buy', price: 1.10538 });
  });

  it('a market order whose rest the broker cancels: the position, its protection and the outcome are the filled lots', async () => {
    bed.broker.partialFill = { units: 3000, rest: 'cancel' };
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40');
    const delivery = await bed.settled(signal);
    bed.broker.partialFill = null;
    const position = [...bed.broker.positions.values()].find((p) => p.units === 3000)!;
    expect(position).toMatchObject({ side: 'buy', price: 1.1052 });
    expect(delivery.result.orders[0]).toMatchObject({
      kind: 'market',
      volume: 0.1,
      filled: 0.03,
      average: 1.1052,
      status: 'cancelled',
      positionId: position.id,
    });
    // The outcome is what the account holds: the lots filled of those asked, at the fill's price.
    expect(delivery.message).toMatch(/^opened buy 0\.03 of 0\.1 1 at 1\.1052 \(position \d+\)$/);
    expect(delivery.result.events[0]).toMatchObject({ type: 'opened', volume: 0.03, requested: 0.1, price: 1.1052 });
    expect(held(position.id)).toEqual([
      ['stop', 1.1032, 3000],
      ['limit', 1.1092, 3000],
    ]);
    expect(delivery.result.orders.slice(1)).toMatchObject([
      { kind: 'stop_loss', volume: 0.03 },
      { kind: 'take_profit', volume: 0.03 },
    ]);
    await waitUntil(async () => (await ours(0.03)) !== undefined, 'the position in the published state');
    expect(await ours(0.03)).toMatchObject({ side: 'buy', price: 1.1052, sl: 1.1032 });
  });

  it('a market order the broker cancels without filling a lot: rejected with the reason, and nothing in the book', async () => {
    const positions = bed.broker.positions.size;
    const published = (await bed.state())?.positions?.length;
    bed.broker.partialFill = { units: 0, rest: 'cancel' };
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40');
    const delivery = await bed.settled(signal, 'rejected');
    expect(delivery.message).toContain(
      'filled none of the 0.1 lots (the order ended cancelled: the order found no liquidity)',
    );
    expect(delivery.result.orders).toMatchObject([{ kind: 'market', volume: 0.1, filled: 0, status: 'cancelled' }]);
    expect(bed.broker.positions.size).toBe(positions);
    expect(bed.sent('D').filter((m) => String(m.ClOrdID).startsWith(clientOrderId(signal, 'p')))).toHaveLength(0);
    // A signal after it is taken and carried out: the book has nothing of the rejected one.
    bed.broker.partialFill = null;
    const next = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.01');
    await bed.settled(next);
    await waitUntil(
      async () => (await bed.state())?.positions?.length === published + 1,
      'the next position, and only it, in the published state',
    );
  });
});
