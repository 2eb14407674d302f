import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { EURUSD, useCTraderBed } from './support/ctrader-bed.js';

/**
 * An agent killed the moment its closing order reaches the cTrader-style broker, which then
 * fills the close (in part) without the agent hearing of it: the broker resends nothing after
 * the next logon and forgets the market order once it ended. The restarted agent learns what the
 * close filled from the position the broker holds, never sends the close again, and ends with
 * the lots the broker holds in its book and published state, protected for exactly those.
 */
describe('a close filled in part while the agent was killed (cTrader-style FIX 4.4)', () => {
  const bed = useCTraderBed();
  let agent: AgentProcess;

  const held = (positionId: string) =>
    [...bed.broker.resting.values()].filter((o) => o.positionId === positionId).map((o) => [o.kind, o.price, o.units]);

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  beforeEach(() => {
    bed.broker.partialClose = null;
    bed.broker.setPrice(EURUSD, 1.105, 1.1052);
  });

  it("the restarted agent takes the part filled from the broker's position, re-protects the rest and closes nothing twice", async () => {
    const before = new Set(bed.broker.positions.keys());
    const opening = await postSignal(
      bed.server.url,
      bed.authKey,
      'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40,comment=kept',
    );
    const ticket = (await bed.settled(opening)).result.events[0].position as number;
    const positionId = [...bed.broker.positions.keys()].find((id) => !before.has(id))!;
    await waitUntil(
      async () => ((await bed.state())?.positions ?? []).some((p: { position: number }) => p.position === ticket),
      'the position in the published state',
    );

    bed.broker.partialClose = { units: 3000 };
    const closing = bed.killAgentWhenBrokerReceives(
      agent,
      (type, m) => type === 'D' && m.PosMaintRptID === positionId && m.OrdType === '1',
    );
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy,comment=kept');
    const close = String((await closing).ClOrdID);
    bed.broker.partialClose = null;
    expect(close).toBe(clientOrderId(signal, 'c1'));
    // The broker filled 0.03 and cancelled the rest; its stop and target still cover 0.1.
    expect(bed.broker.positions.get(positionId)).toMatchObject({ units: 7000 });

    agent = await bed.startReady();
    const delivery = await bed.settled(signal);
    expect(bed.sent('D').filter((m) => m.ClOrdID === close)).toHaveLength(1);
    expect(bed.broker.positions.get(positionId)).toMatchObject({ units: 7000 });
    expect(delivery.result.events[0]).toMatchObject({
      type: 'partial_close',
      position: ticket,
      volume: 0.03,
      requested: 0.1,
    });
    expect(delivery.message).toMatch(
      new RegExp(`^closed 0\\.03 of 0\\.1 lots of position ${ticket} at .*stays open with 0\\.07 lots`),
    );
    expect(delivery.message).toContain('did not say the price it closed');
    expect(held(positionId)).toEqual([
      ['stop', 1.1032, 7000],
      ['limit', 1.1092, 7000],
    ]);
    await waitUntil(
      async () =>
        ((await bed.state())?.positions ?? []).some(
          (p: { position: number; volume: number }) => p.position === ticket && p.volume === 0.07,
        ),
      'the lots left in the published state',
    );
  }, 120_000);
  /** Opens buy 0.1 with `extra`, then closes it whole with the agent killed the moment the broker receives the close. */
  const emptiedWhileKilled = async (extra: string, comment: string) => {
    const before = new Set(bed.broker.positions.keys());
    const opening = await postSignal(bed.server.url, bed.authKey, `EURUSD,buy,vol=0.1${extra},comment=${comment}`);
    const ticket = (await bed.settled(opening)).result.events[0].position as number;
    const positionId = [...bed.broker.positions.keys()].find((id) => !before.has(id))!;
    await waitUntil(
      async () => ((await bed.state())?.positions ?? []).some((p: { position: number }) => p.position === ticket),
      'the position in the published state',
    );
    const closing = bed.killAgentWhenBrokerReceives(
      agent,
      (type, m) => type === 'D' && m.PosMaintRptID === positionId && m.OrdType === '1',
    );
    const signal = await postSignal(bed.server.url, bed.authKey, `EURUSD,closebuy,comment=${comment}`);
    const close = String((await closing).ClOrdID);
    expect(close).toBe(clientOrderId(signal, 'c1'));
    expect(bed.broker.positions.has(positionId)).toBe(false);
    agent = await bed.startReady();
    return { ticket, positionId, signal, close };
  };

  it("a close that emptied a position without stop or target while the agent was dead: executed, closed, the price the agent's", async () => {
    const { ticket, positionId, signal, close } = await emptiedWhileKilled('', 'bare');
    const delivery = await bed.settled(signal);
    expect(bed.sent('D').filter((m) => m.ClOrdID === close)).toHaveLength(1);
    expect(delivery.result.events[0]).toMatchObject({ type: 'closed', position: ticket, volume: 0.1 });
    expect(delivery.message).toMatch(new RegExp(`^closed .*position ${ticket}`));
    expect(delivery.message).toContain('did not say the price it closed');
    expect(bed.broker.positions.has(positionId)).toBe(false);
    await waitUntil(
      async () => !((await bed.state())?.positions ?? []).some((p: { position: number }) => p.position === ticket),
      'the position gone from the published state',
    );
  }, 120_000);

  it('a close that emptied a position with a stop and target while the agent was dead: the outcome says it cannot be told who closed it', async () => {
    const { ticket, positionId, signal, close } = await emptiedWhileKilled(',sl_pips=20,tp_pips=40', 'guarded');
    const delivery = await bed.settled(signal, 'failed');
    expect(bed.sent('D').filter((m) => m.ClOrdID === close)).toHaveLength(1);
    expect(delivery.message).toContain(
      `closing 0.1 of position ${ticket} (buy 1): position ${positionId} is no longer held`,
    );
    expect(delivery.message).toContain('cannot be told');
    expect(
      delivery.result.events.filter((e: { type: string }) => e.type === 'closed' || e.type === 'partial_close'),
    ).toEqual([]);
    expect(held(positionId)).toEqual([]);
    await waitUntil(
      async () => !((await bed.state())?.positions ?? []).some((p: { position: number }) => p.position === ticket),
      'the position gone from the published state',
    );
  }, 120_000);
});
