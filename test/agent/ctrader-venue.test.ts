import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import type { CTraderCounterparty } from '../fakes/ctrader-counterparty.js';
import type { TestServer } from '../support/start-test-server.js';
import { deliveriesOf, postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { EURUSD, useCTraderBed } from './support/ctrader-bed.js';

/**
 * The whole path to a cTrader-style FIX 4.4 broker: a signal posted to the server reaches
 * `signalgate agent --venue fix` (a real process) with `dialect: "ctrader"`, which trades with a
 * counterparty on jspurefix's acceptor side playing cTrader's rules (market orders filled at
 * the quote, hedged positions named by PosMaintRptID 721, stops and targets held by the broker
 * and tied to the position, PositionReports, cancels). What the broker does on its own (a
 * pending order filled, a stop filled) reaches the agent's book and its published state.
 * Breakeven and trailing read the quotes the broker streams on the MarketDataRequest
 * subscription and move the stop the broker holds.
 */
describe('an agent on a cTrader-style FIX 4.4 broker', () => {
  const bed = useCTraderBed();
  let agent: AgentProcess | null = null;
  let broker: CTraderCounterparty;
  let server: TestServer;
  let authKey: string;
  const { start, state, settled, sent } = bed;

  beforeAll(() => {
    ({ broker, server, authKey } = bed);
  });

  it('logs on to both sessions and reconciles from PositionReports before taking signals', async () => {
    agent = start();
    await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 40_000);
    expect(broker.logons.map((l) => l.session).sort()).toEqual(['QUOTE', 'TRADE']);
    expect(sent('AN')).toHaveLength(1);
    expect(sent('AF')).toHaveLength(1);
  });

  it('a market order is filled at the quote; its stop and target are held by the broker, tied to the position (721)', async () => {
    const signal = await postSignal(server.url, authKey, 'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40');
    const delivery = await settled(signal);
    const [position] = [...broker.positions.values()];
    expect(position).toMatchObject({ symbol: EURUSD, side: 'buy', units: 10000, price: 1.1052 });
    expect(delivery.result.orders).toMatchObject([
      {
        clientId: clientOrderId(signal, 'o'),
        kind: 'market',
        side: 'buy',
        volume: 0.1,
        status: 'filled',
        average: 1.1052,
        positionId: position!.id,
      },
      { kind: 'stop_loss', side: 'sell', volume: 0.1, price: 1.1032, status: 'open' },
      { kind: 'take_profit', side: 'sell', volume: 0.1, price: 1.1092, status: 'open' },
    ]);
    expect([...broker.resting.values()].map((o) => [o.kind, o.side, o.price, o.units, o.positionId])).toEqual([
      ['stop', 'sell', 1.1032, 10000, position!.id],
      ['limit', 'sell', 1.1092, 10000, position!.id],
    ]);
    await waitUntil(async () => (await state())?.positions?.length === 1, 'the position in the published state');
    expect((await state()).positions[0]).toMatchObject({
      symbol: EURUSD,
      side: 'buy',
      volume: 0.1,
      price: 1.1052,
      sl: 1.1032,
    });
  });

  it("the broker fills the stop: the position closes in the agent's book and state, and the broker cancels the target", async () => {
    broker.setPrice(EURUSD, 1.1029, 1.1031);
    expect(broker.positions.size).toBe(0);
    expect(broker.resting.size).toBe(0);
    await agent!.waitForLog(
      (l) => l.msg === 'account event' && l.event?.type === 'closed' && l.event.reason === 'sl',
      "the close by the broker's stop",
    );
    const closed = agent!.lines().find((l) => l.msg === 'account event' && l.event?.type === 'closed')!;
    expect(closed.event).toMatchObject({ volume: 0.1, price: 1.1029 });
    expect(agent!.lines().some((l) => l.msg === 'venue report' && l.report?.by === 'stop_loss')).toBe(true);
    await waitUntil(async () => (await state())?.positions?.length === 0, 'no position in the published state');
    broker.setPrice(EURUSD, 1.105, 1.1052);
  });

  it('a pending order the broker fills later becomes a position in the book and state, protected by the broker', async () => {
    const signal = await postSignal(
      server.url,
      authKey,
      'EURUSD,buylimit,vol=0.05,entry_price=1.104,sl_pips=30,tp_pips=50',
    );
    const delivery = await settled(signal);
    expect(delivery.message).toBe('placed buy limit 0.05 1 at 1.104 (order 2)');
    await waitUntil(async () => (await state())?.orders?.length === 1, 'the pending order in the published state');
    broker.setPrice(EURUSD, 1.1037, 1.1039);
    const [position] = [...broker.positions.values()];
    expect(position).toMatchObject({ side: 'buy', units: 5000, price: 1.1039 });
    await waitUntil(
      async () => ((s) => s?.positions?.length === 1 && s?.orders?.length === 0)(await state()),
      'the filled order as a position in the published state',
    );
    expect((await state()).positions[0]).toMatchObject({ volume: 0.05, price: 1.1039, sl: 1.101 });
    await waitUntil(async () => broker.resting.size === 2, 'the stop and target at the broker');
    expect([...broker.resting.values()].map((o) => [o.kind, o.price, o.units, o.positionId])).toEqual([
      ['stop', 1.101, 5000, position!.id],
      ['limit', 1.109, 5000, position!.id],
    ]);
    // The signal's outcome was settled when its order stood; the fill is the book's news.
    expect((await deliveriesOf(server, signal))[0].message).toBe(delivery.message);
    broker.setPrice(EURUSD, 1.105, 1.1052);
  });

  it('a cancel signal cancels a pending order with OrderCancelRequest, answered by an ExecutionReport 150=4', async () => {
    const placed = await postSignal(server.url, authKey, 'EURUSD,buylimit,vol=0.02,entry_price=1.09');
    await settled(placed);
    await waitUntil(async () => (await state())?.orders?.length === 1, 'the pending order in the published state');
    const cancel = await postSignal(server.url, authKey, 'EURUSD,cancellong');
    const delivery = await settled(cancel);
    expect(delivery.message).toContain('cancelled');
    expect(sent('F').map((m) => m.OrigClOrdID)).toEqual([clientOrderId(placed, 'o')]);
    expect([...broker.resting.values()].some((o) => o.clOrdId === clientOrderId(placed, 'o'))).toBe(false);
    await waitUntil(async () => (await state())?.orders?.length === 0, 'no pending order in the published state');
  });

  it('on restart, positions are reconciled from PositionReports by their ids: one closed at the broker meanwhile leaves the book', async () => {
    const second = await postSignal(server.url, authKey, 'EURUSD,buy,vol=0.03');
    await settled(second);
    await waitUntil(async () => (await state())?.positions?.length === 2, 'two positions in the published state');
    const stopped = await agent!.stop();
    expect(stopped.code).toBe(0);
    // Closed on the platform while the agent was away: the one the limit order opened.
    const limitPosition = [...broker.positions.values()].find((p) => p.units === 5000)!;
    broker.closePosition(limitPosition.id);
    agent = start();
    await agent.waitForLog(
      (l) => typeof l.msg === 'string' && l.msg.startsWith('the venue no longer holds this position'),
      'the reconciled book',
      40_000,
    );
    const ready = await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 40_000);
    expect(ready.positions).toBe(1);
    await waitUntil(
      async () => ((s) => s?.positions?.length === 1 && s?.connected === true)(await state()),
      'one position in the published state',
    );
    expect((await state()).positions[0]).toMatchObject({ volume: 0.03, price: 1.1052 });
  });

  it('breakeven then trailing, at the quotes the broker streams on the MarketDataRequest subscription, move the broker-held stop: the new one placed (721), then the old one cancelled', async () => {
    const signal = await postSignal(
      server.url,
      authKey,
      'EURUSD,buy,vol=0.04,sl_pips=20,tp_pips=60,be_trigger=10,trail_trigger=20,trail_distance=15',
    );
    const delivery = await settled(signal);
    const position = [...broker.positions.values()].find((p) => p.units === 4000)!;
    expect(position).toMatchObject({ side: 'buy', price: 1.1052 });
    const firstStop = delivery.result.orders[1];
    expect(firstStop).toMatchObject({ kind: 'stop_loss', price: 1.1032, status: 'open' });
    // The stop and target of revision n of this position: `…p<ticket>r<n>s` and `…r<n>t1`.
    const revision = (n: number, order: 's' | 't1') => String(firstStop.clientId).replace(/r0s$/, `r${n}${order}`);
    const held = () =>
      [...broker.resting.values()]
        .filter((o) => o.positionId === position.id)
        .map((o) => [o.kind, o.side, o.price, o.units, o.clOrdId]);
    expect(held()).toEqual([
      ['stop', 'sell', 1.1032, 4000, revision(0, 's')],
      ['limit', 'sell', 1.1112, 4000, revision(0, 't1')],
    ]);
    const ours = async () => ((await state())?.positions ?? []).find((p: { volume: number }) => p.volume === 0.04);
    await waitUntil(async () => (await ours())?.sl === 1.1032, 'the stop in the published state');
    const placedBefore = sent('D').length;
    const cancelsBefore = sent('F').length;

    // From here the broker streams each new quote (35=W) to the agent's subscription.
    broker.streamQuotes = true;
    // Bid 1.1063: 11 pips in profit, past be_trigger=10: the stop goes to the entry, 1.1052.
    broker.setPrice(EURUSD, 1.1063, 1.1065);
    await waitUntil(async () => (await ours())?.sl === 1.1052, 'the breakeven stop in the published state');
    await waitUntil(() => held().length === 2, 'the old stop and target cancelled at the broker');
    expect(held()).toEqual([
      ['stop', 'sell', 1.1052, 4000, revision(1, 's')],
      ['limit', 'sell', 1.1112, 4000, revision(1, 't1')],
    ]);
    const moved = sent('D').slice(placedBefore);
    expect(moved.map((m) => [m.ClOrdID, m.OrdType, m.StopPx ?? m.Price, m.PosMaintRptID])).toEqual([
      [revision(1, 's'), '3', 1.1052, position.id],
      [revision(1, 't1'), '2', 1.1112, position.id],
    ]);
    expect(
      sent('F')
        .slice(cancelsBefore)
        .map((m) => m.OrigClOrdID),
    ).toEqual([revision(0, 's'), revision(0, 't1')]);
    expect(broker.positions.get(position.id)).toMatchObject({ units: 4000 });

    // Bid 1.1082: 30 pips in profit, past trail_trigger=20: the stop trails 15 pips behind, 1.1067.
    broker.setPrice(EURUSD, 1.1082, 1.1084);
    await waitUntil(async () => (await ours())?.sl === 1.1067, 'the trailing stop in the published state');
    await waitUntil(() => held().length === 2, 'the breakeven stop and its target cancelled at the broker');
    expect(held()).toEqual([
      ['stop', 'sell', 1.1067, 4000, revision(2, 's')],
      ['limit', 'sell', 1.1112, 4000, revision(2, 't1')],
    ]);
    expect(
      sent('F')
        .slice(cancelsBefore)
        .map((m) => m.OrigClOrdID),
    ).toEqual([revision(0, 's'), revision(0, 't1'), revision(1, 's'), revision(1, 't1')]);
    // Exactly one stop works at the broker for the position, and the trailed stop does its job.
    expect([...broker.resting.values()].filter((o) => o.kind === 'stop' && o.positionId === position.id)).toHaveLength(
      1,
    );
    broker.setPrice(EURUSD, 1.1066, 1.1068);
    expect(broker.positions.has(position.id)).toBe(false);
    await waitUntil(async () => (await ours()) === undefined, 'the stopped position gone from the published state');
  });

  it('a streamed quote crossing a pending entry leaves it pending until the broker reports its fill; then it is protected, tied to the position (721)', async () => {
    broker.streamQuotes = true;
    broker.setPrice(EURUSD, 1.1066, 1.1068);
    // A position whose breakeven shows when the agent has applied a quote.
    const market = await postSignal(server.url, authKey, 'EURUSD,buy,vol=0.06,sl_pips=20,be_trigger=10');
    await settled(market);
    const marketPosition = [...broker.positions.values()].find((p) => p.units === 6000)!;
    expect(marketPosition).toMatchObject({ side: 'buy', price: 1.1068 });
    const limit = await postSignal(
      server.url,
      authKey,
      'EURUSD,selllimit,vol=0.05,entry_price=1.108,sl_pips=30,tp_pips=50',
    );
    expect((await settled(limit)).message).toMatch(/^placed sell limit 0.05 1 at 1.108 /);
    const entryId = clientOrderId(limit, 'o');
    const pendingOrders = async () =>
      ((await state())?.orders ?? []).filter((o: { volume: number }) => o.volume === 0.05);
    await waitUntil(async () => (await pendingOrders()).length === 1, 'the sell limit in the published state');
    const placedBefore = sent('D').length;
    const fillEvents = () =>
      agent!.lines().filter((l) => l.msg === 'account event' && l.event?.type === 'order_filled').length;
    const fillEventsBefore = fillEvents();

    // Bid 1.1081 reaches the sell limit (1.108) and puts the buy 13 pips in profit; the broker's fill lags behind.
    broker.streamQuoteOnly(EURUSD, 1.1081, 1.1083);
    const marketOurs = async () =>
      ((await state())?.positions ?? []).find((p: { volume: number }) => p.volume === 0.06);
    await waitUntil(
      async () => (await marketOurs())?.sl === 1.1068,
      'the breakeven the streamed quote caused, in the published state',
    );
    // The same quote left the entry pending: no position of the agent's own making, no stop or target for it.
    expect(await pendingOrders()).toMatchObject([{ side: 'sell', kind: 'limit', price: 1.108 }]);
    expect(((await state()).positions ?? []).some((p: { volume: number }) => p.volume === 0.05)).toBe(false);
    expect(fillEvents()).toBe(fillEventsBefore);
    const sinceQuote = sent('D').slice(placedBefore);
    expect(sinceQuote.every((m) => m.PosMaintRptID === marketPosition.id)).toBe(true);
    expect([...broker.resting.values()].some((o) => o.clOrdId === entryId)).toBe(true);

    // The broker fills the order: its report makes the position, and the stop and target name it.
    broker.setPrice(EURUSD, 1.1081, 1.1083);
    const filled = [...broker.positions.values()].find((p) => p.units === 5000 && p.side === 'sell')!;
    expect(filled).toMatchObject({ price: 1.1081 });
    await waitUntil(
      async () =>
        ((s) =>
          !(s?.orders ?? []).some((o: { volume: number }) => o.volume === 0.05) &&
          (s?.positions ?? []).some((p: { volume: number }) => p.volume === 0.05))(await state()),
      'the filled entry as a position in the published state',
    );
    expect(((await state()).positions as { volume: number }[]).find((p) => p.volume === 0.05)).toMatchObject({
      side: 'sell',
      price: 1.1081,
      sl: 1.111,
    });
    await waitUntil(
      () => [...broker.resting.values()].filter((o) => o.positionId === filled.id).length === 2,
      'the stop and target at the broker',
    );
    expect(
      [...broker.resting.values()]
        .filter((o) => o.positionId === filled.id)
        .map((o) => [o.kind, o.side, o.price, o.units]),
    ).toEqual([
      ['stop', 'buy', 1.111, 5000],
      ['limit', 'buy', 1.103, 5000],
    ]);
    // Nothing was placed without naming its position.
    expect(
      sent('D')
        .slice(placedBefore)
        .every((m) => m.PosMaintRptID !== undefined),
    ).toBe(true);
    // The log reaches the test through a pipe, behind the published state.
    await agent!.waitForLog(
      (l) => l.msg === 'venue report' && l.report?.type === 'entry_filled' && l.report.order?.clientId === entryId,
      'the fill report in the log',
    );
    expect(
      agent!
        .lines()
        .filter(
          (l) => l.msg === 'venue report' && l.report?.type === 'entry_filled' && l.report.order?.clientId === entryId,
        ),
    ).toHaveLength(1);
  });

  it('a streamed quote reaching a target closes nothing until the broker reports the target filled; its lots are closed once', async () => {
    const signal = await postSignal(
      server.url,
      authKey,
      'EURUSD,buy,vol=0.1,sl_pips=20,tp1_pips=10,pct1=50,tp2_pips=30,pct2=50,be_trigger=10',
    );
    await settled(signal);
    const position = [...broker.positions.values()].find((p) => p.units === 10000 && p.side === 'buy')!;
    expect(position.price).toBe(1.1083);
    const held = () =>
      [...broker.resting.values()].filter((o) => o.positionId === position.id).map((o) => [o.kind, o.price, o.units]);
    expect(held()).toEqual([
      ['stop', 1.1063, 10000],
      ['limit', 1.1093, 5000],
      ['limit', 1.1113, 5000],
    ]);
    const ours = async () =>
      ((await state())?.positions ?? []).find(
        (p: { price: number; side: string }) => p.price === 1.1083 && p.side === 'buy',
      );
    await waitUntil(async () => (await ours())?.sl === 1.1063, 'the position in the published state');

    // Bid 1.1094: past the first target (1.1093) and 11 pips in profit; the broker's fill lags behind.
    broker.streamQuoteOnly(EURUSD, 1.1094, 1.1096);
    await waitUntil(
      async () => (await ours())?.sl === 1.1083,
      'the breakeven the streamed quote caused, in the published state',
    );
    expect((await ours()).volume).toBe(0.1);
    await waitUntil(() => held().length === 3 && held()[0]![1] === 1.1083, 'the stop moved at the broker');

    // The broker fills the first target: the book closes its 0.05 lots, once, and protects the rest.
    broker.setPrice(EURUSD, 1.1094, 1.1096);
    expect(broker.positions.get(position.id)).toMatchObject({ units: 5000 });
    // The filled target leaves the broker at once; then the agent places the rest's stop and target and cancels the old ones.
    await waitUntil(() => held().length === 2 && held()[0]![2] === 5000, 'the rest protected at the broker');
    expect(held()).toEqual([
      ['stop', 1.1083, 5000],
      ['limit', 1.1113, 5000],
    ]);
    await waitUntil(async () => (await ours())?.volume === 0.05, 'the reduced position in the published state');
    await agent!.waitForLog(
      (l) => l.msg === 'account event' && l.event?.type === 'partial_close' && l.event.price === 1.1094,
      "the target's close in the log",
    );
    const closes = agent!
      .lines()
      .filter(
        (l) =>
          l.msg === 'account event' &&
          (l.event?.type === 'partial_close' || l.event?.type === 'closed') &&
          l.event.price === 1.1094,
      );
    expect(closes.map((l) => [l.event.type, l.event.volume])).toEqual([['partial_close', 0.05]]);
  });
});
