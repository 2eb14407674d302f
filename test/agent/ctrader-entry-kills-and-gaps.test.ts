import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { EURUSD, useCTraderBed } from './support/ctrader-bed.js';

/**
 * What the cTrader-style broker forgets: a market order once it ended (an OrderStatusRequest
 * answers 39=8), and every report sent while the agent was not logged on (each logon resets the
 * sequence numbers, nothing is resent). So an entry is looked up by the position it opened, as a
 * close is; and every logon, not only the first, is followed by order and position status.
 */
describe('cTrader entries across a kill and fills across a reconnect', () => {
  const bed = useCTraderBed();
  let agent: AgentProcess;

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  /** The broker's orders tied to a position: kind, price, units. */
  const held = (positionId: string) =>
    [...bed.broker.resting.values()].filter((o) => o.positionId === positionId).map((o) => [o.kind, o.price, o.units]);
  const publishedLots = async () =>
    ((await bed.state())?.positions ?? [])
      .map((p: { volume: number; price: number }) => `${p.volume}@${p.price}`)
      .sort();
  const brokerLots = () => [...bed.broker.positions.values()].map((p) => `${p.units / 100000}@${p.price}`).sort();

  it('killed after the market entry reached the broker and filled, before the journal: the restart opens no second position', async () => {
    bed.broker.setPrice(EURUSD, 1.105, 1.1052);
    const before = new Set(bed.broker.positions.keys());
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.05,sl_pips=30,tp_pips=50');
    const entryId = clientOrderId(signal, 'o');
    // The broker fills it the moment it arrives; the agent dies before reading the fill.
    await bed.killAgentWhenBrokerReceives(agent, (type, m) => type === 'D' && m.ClOrdID === entryId);
    const opened = () => [...bed.broker.positions.values()].filter((p) => !before.has(p.id));
    expect(opened()).toMatchObject([{ side: 'buy', units: 5000, price: 1.1052 }]);

    agent = await bed.startReady();
    const delivery = await bed.settled(signal);
    expect(delivery.message).toMatch(/^opened buy 0\.05 1 at 1\.1052/);
    expect(bed.sent('D').filter((m) => m.ClOrdID === entryId)).toHaveLength(1);
    expect(opened()).toHaveLength(1);
    const positionId = opened()[0]!.id;
    await waitUntil(() => held(positionId).length === 2, 'the stop and target at the broker');
    expect(held(positionId)).toEqual([
      ['stop', 1.1022, 5000],
      ['limit', 1.1102, 5000],
    ]);
    await waitUntil(async () => (await publishedLots()).join() === brokerLots().join(), 'the book equal to the broker');
    await waitUntil(async () => (await bed.state())?.notManaged?.length === 0, 'nothing left not managed', 15_000);
    const state = await bed.state();
    expect(state.positions.find((p: { volume: number }) => p.volume === 0.05)).toMatchObject({ sl: 1.1022 });
  }, 120_000);

  it('a pending entry filled while the trade session was down: the fill reaches the book after the next logon, without a restart', async () => {
    bed.broker.setPrice(EURUSD, 1.105, 1.1052);
    const signal = await postSignal(
      bed.server.url,
      bed.authKey,
      'EURUSD,buylimit,vol=0.03,entry_price=1.104,sl_pips=30,tp_pips=50',
    );
    expect((await bed.settled(signal)).message).toMatch(/^placed buy limit 0\.03 1 at 1\.104/);
    await waitUntil(async () => (await bed.state())?.orders?.length === 1, 'the pending order published');
    const logons = bed.broker.logons.filter((l) => l.session === 'TRADE').length;
    const before = new Set(bed.broker.positions.keys());

    // The session ends; the entry fills before the agent is back, and its report is lost.
    bed.broker.dropTradeSession();
    bed.broker.setPrice(EURUSD, 1.1037, 1.1039);
    const positionId = [...bed.broker.positions.keys()].find((id) => !before.has(id))!;
    expect(bed.broker.positions.get(positionId)).toMatchObject({ side: 'buy', units: 3000, price: 1.1039 });
    await waitUntil(
      () => bed.broker.logons.filter((l) => l.session === 'TRADE').length > logons && bed.broker.loggedOn,
      'the agent logged on again',
      20_000,
    );

    await waitUntil(() => held(positionId).length === 2, 'the stop and target of the fill at the broker', 20_000);
    expect(held(positionId)).toEqual([
      ['stop', 1.101, 3000],
      ['limit', 1.109, 3000],
    ]);
    await waitUntil(
      async () => (await bed.state())?.orders?.length === 0 && (await publishedLots()).join() === brokerLots().join(),
      'the fill in the published book, the pending order gone',
      20_000,
    );
    // What the start's comparison found not managed is compared again within 5 s (--reconcile-every).
    await waitUntil(async () => (await bed.state())?.notManaged?.length === 0, 'nothing left not managed', 15_000);
    expect((await bed.state()).positions.find((p: { volume: number }) => p.volume === 0.03)).toMatchObject({
      price: 1.1039,
      sl: 1.101,
    });
    expect(agent.child.exitCode).toBe(null);
  }, 120_000);

  it('a market entry whose fill is lost with the session: after the next logon it is found by its position, not sent again', async () => {
    bed.broker.setPrice(EURUSD, 1.105, 1.1052);
    const before = new Set(bed.broker.positions.keys());
    const hooks = bed.broker.options;
    let cut = false;
    // The session ends the moment the entry arrives: the broker fills it, and its report is lost.
    hooks.onMessage = (type, m) => {
      if (cut || type !== 'D' || m.PosMaintRptID !== undefined || !/o$/.test(String(m.ClOrdID))) return;
      cut = true;
      bed.broker.dropTradeSession();
    };
    try {
      const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.02,sl_pips=30,tp_pips=50');
      const entryId = clientOrderId(signal, 'o');
      const delivery = await bed.settled(signal);
      expect(cut).toBe(true);
      expect(delivery.message).toMatch(/^opened buy 0\.02 1 at 1\.1052/);
      expect(bed.sent('D').filter((m) => m.ClOrdID === entryId)).toHaveLength(1);
    } finally {
      hooks.onMessage = undefined;
    }
    const opened = [...bed.broker.positions.values()].filter((p) => !before.has(p.id));
    expect(opened).toMatchObject([{ side: 'buy', units: 2000, price: 1.1052 }]);
    await waitUntil(() => held(opened[0]!.id).length === 2, 'the stop and target at the broker');
    await waitUntil(async () => (await publishedLots()).join() === brokerLots().join(), 'the book equal to the broker');
    // What the start's comparison found not managed is compared again within 5 s (--reconcile-every).
    await waitUntil(async () => (await bed.state())?.notManaged?.length === 0, 'nothing left not managed', 15_000);
    expect(agent.child.exitCode).toBe(null);
  }, 120_000);
});
