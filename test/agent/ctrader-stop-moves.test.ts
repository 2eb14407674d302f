import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { EURUSD, useCTraderBed } from './support/ctrader-bed.js';

/**
 * Moving a stop the cTrader-style broker holds (breakeven here) when the broker does not go
 * along: it refuses the new stop, or it leaves the old stop's cancel unanswered and the agent is
 * killed meanwhile. Either way the position ends with exactly one stop at the broker, tied to it
 * by 721, and until then the agent's log and published state say where the move stands.
 */
describe('stop moves at a cTrader-style FIX 4.4 broker that does not go along', () => {
  const bed = useCTraderBed();
  let agent: AgentProcess;

  /** The broker's orders tied to a position: kind, price, ClOrdID. */
  const held = (positionId: string) =>
    [...bed.broker.resting.values()]
      .filter((o) => o.positionId === positionId)
      .map((o) => [o.kind, o.price, o.clOrdId]);
  /** The open position of `units` at the broker, after a market order. */
  const brokerPosition = (units: number) => [...bed.broker.positions.values()].find((p) => p.units === units)!;
  const ours = async (volume: number) =>
    ((await bed.state())?.positions ?? []).find((p: { volume: number }) => p.volume === volume);

  it('a moved stop the broker rejects leaves the old stop (and target) in place, says so in the log and state, and goes through once the broker takes it', async () => {
    agent = await bed.startReady();
    const signal = await postSignal(
      bed.server.url,
      bed.authKey,
      'EURUSD,buy,vol=0.04,sl_pips=20,tp_pips=60,be_trigger=10',
    );
    const delivery = await bed.settled(signal);
    const position = brokerPosition(4000);
    const revision = (n: number, order: 's' | 't1') =>
      String(delivery.result.orders[1].clientId).replace(/r0s$/, `r${n}${order}`);
    expect(held(position.id)).toEqual([
      ['stop', 1.1032, revision(0, 's')],
      ['limit', 1.1112, revision(0, 't1')],
    ]);
    await waitUntil(async () => (await ours(0.04))?.sl === 1.1032, 'the stop in the published state');

    const refusal = 'TRADING_BAD_STOPS: the stop loss is too close to the market';
    bed.broker.refuseStops = refusal;
    bed.broker.streamQuotes = true;
    // Bid 1.1063: 11 pips in profit, past be_trigger=10: the stop should go to the entry, 1.1052.
    bed.broker.setPrice(EURUSD, 1.1063, 1.1065);
    const warned = await agent.waitForLog(
      (l) => l.level === 40 && typeof l.msg === 'string' && l.msg.includes('refused moving the stop'),
      'the refusal in the log',
    );
    expect(warned.msg).toContain(refusal);
    expect(warned.msg).toContain('to 1.1052');
    await waitUntil(
      async () => (await ours(0.04))?.stopMove?.refused?.includes(refusal) === true,
      'the refused move in the published state',
    );
    expect((await ours(0.04)).stopMove).toMatchObject({ to: 1.1052 });
    // Tried again at the next passes, the old stop and target standing meanwhile.
    await waitUntil(
      () => bed.sent('D').filter((m) => m.ClOrdID === revision(1, 's')).length >= 3,
      'the move tried again',
    );
    expect(held(position.id)).toEqual([
      ['stop', 1.1032, revision(0, 's')],
      ['limit', 1.1112, revision(0, 't1')],
    ]);
    expect(bed.sent('F')).toEqual([]);
    expect(bed.sent('D').filter((m) => m.ClOrdID === revision(1, 't1'))).toEqual([]);

    bed.broker.refuseStops = null;
    await waitUntil(
      () => held(position.id).length === 2 && held(position.id)[0]![2] === revision(1, 's'),
      'the new stop and target, the old ones cancelled',
    );
    expect(held(position.id)).toEqual([
      ['stop', 1.1052, revision(1, 's')],
      ['limit', 1.1112, revision(1, 't1')],
    ]);
    expect(bed.sent('F').map((m) => m.OrigClOrdID)).toEqual([revision(0, 's'), revision(0, 't1')]);
    await waitUntil(
      async () => ((p) => p?.sl === 1.1052 && p.stopMove === undefined)(await ours(0.04)),
      'the moved stop in the published state, the move done',
    );
  });

  it("killed while the old stop's cancel waits for an answer, the restarted agent finishes the move: exactly one stop at the broker, at the new level", async () => {
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.03,sl_pips=20,be_trigger=10');
    const delivery = await bed.settled(signal);
    const position = brokerPosition(3000);
    expect(position.price).toBe(1.1065);
    const revision = (n: number) => String(delivery.result.orders[1].clientId).replace(/r0s$/, `r${n}s`);
    expect(held(position.id)).toEqual([['stop', 1.1045, revision(0)]]);
    await waitUntil(async () => (await ours(0.03))?.sl === 1.1045, 'the stop in the published state');

    // The broker takes the new stop but leaves the old one's cancel unanswered; the agent dies waiting.
    bed.broker.holdCancels = true;
    const cancelsBefore = bed.sent('F').length;
    bed.broker.setPrice(EURUSD, 1.1076, 1.1078);
    await waitUntil(
      () =>
        bed
          .sent('F')
          .slice(cancelsBefore)
          .some((m) => m.OrigClOrdID === revision(0)),
      'the cancel of the old stop sent',
    );
    await agent.kill();
    bed.broker.holdCancels = false;
    expect(held(position.id)).toEqual([
      ['stop', 1.1045, revision(0)],
      ['stop', 1.1065, revision(1)],
    ]);
    const placedBefore = bed.sent('D').length;

    agent = bed.start();
    await agent.waitForLog(
      (l) => l.msg === 'finished moving the stops the last run had begun to move',
      'the move finished',
      40_000,
    );
    await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 40_000);
    expect(held(position.id)).toEqual([['stop', 1.1065, revision(1)]]);
    // The new stop was known, not placed again; the old one cancelled by the new run.
    expect(bed.sent('D').slice(placedBefore)).toEqual([]);
    expect(
      bed
        .sent('F')
        .slice(cancelsBefore)
        .map((m) => m.OrigClOrdID),
    ).toEqual([revision(0), revision(0)]);
    await waitUntil(
      async () =>
        ((s) =>
          ((p) => p?.sl === 1.1065 && p.stopMove === undefined)(
            (s?.positions ?? []).find((p: { volume: number }) => p.volume === 0.03),
          ) && s?.connected === true)(await bed.state()),
      'the new stop in the published state',
    );
    // The one stop does its job.
    bed.broker.setPrice(EURUSD, 1.1064, 1.1066);
    expect(bed.broker.positions.has(position.id)).toBe(false);
    await waitUntil(async () => (await ours(0.03)) === undefined, 'the stopped position gone from the published state');
  });
});
