import { beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { useFix44Bed } from './support/fix44-bed.js';

/**
 * An agent killed the moment a plain FIX 4.4 broker receives its closing NewOrderSingle, which
 * the broker then fills (whole, or in part with the rest cancelled) while the agent is dead. The
 * restarted agent learns the close by OrderStatusRequest (and the broker's resend), sends it no
 * second time, and ends with what the broker holds: its book, published state and stop and
 * target equal to the broker's, the signal's outcome the broker's fill.
 */
describe('a close across a restart at a plain FIX 4.4 broker', () => {
  const bed = useFix44Bed();
  let agent: AgentProcess;

  /** The orders working at the broker protecting the position the signal opened: side, type, price, units. */
  const protection = (opening: string) =>
    bed.broker
      .working()
      .filter((o) => o.clOrdId.startsWith(clientOrderId(opening, 'o').slice(0, 18)))
      .map((o) => [o.side, o.ordType, o.price, o.units])
      .sort();

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  beforeEach(() => {
    bed.broker.partialMarket = null;
  });

  /** Opens buy 0.1 (stop 20 pips, target 40), then posts `close` with the agent killed the moment the broker receives it. */
  const closeWhileKilled = async (close: string, partialMarket: { units: number } | null) => {
    const opening = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40');
    const ticket = (await bed.settled(opening)).result.events[0].position as number;
    await waitUntil(
      async () => ((await bed.state())?.positions ?? []).some((p: { position: number }) => p.position === ticket),
      'the position in the published state',
    );
    expect(protection(opening)).toHaveLength(2);
    bed.broker.partialMarket = partialMarket;
    const closing = bed.killAgentWhenBrokerReceives(
      agent,
      (type, m) => type === 'D' && m.OrdType === '1' && m.Side === '2',
    );
    const signal = await postSignal(bed.server.url, bed.authKey, close);
    const sent = String((await closing).ClOrdID);
    bed.broker.partialMarket = null;
    expect(sent).toBe(clientOrderId(signal, 'c1'));
    agent = await bed.startReady();
    return { opening, ticket, signal, closeId: sent, delivery: await bed.settled(signal) };
  };

  it("filled in part (0.03 of 0.1) while the agent was dead: the outcome says 0.03 at the broker's price, the 0.07 left protected for 0.07", async () => {
    const { opening, ticket, closeId, delivery } = await closeWhileKilled('EURUSD,closebuy', { units: 3000 });
    expect(bed.sent('D').filter((m) => m.ClOrdID === closeId)).toHaveLength(1);
    expect(bed.broker.order(closeId)).toMatchObject({ cumUnits: 3000, avgPx: 1.105, status: '4' });
    expect(delivery.result.events[0]).toMatchObject({
      type: 'partial_close',
      position: ticket,
      volume: 0.03,
      price: 1.105,
      requested: 0.1,
    });
    expect(delivery.message).toMatch(
      new RegExp(`^closed 0\\.03 of 0\\.1 lots of position ${ticket} at 1\\.105, .*stays open with 0\\.07 lots`),
    );
    expect(delivery.message).not.toContain('did not say the price');
    expect(bed.broker.netUnits('EURUSD')).toBe(7000);
    await waitUntil(
      () => protection(opening).length === 2 && protection(opening).every((o) => o[3] === 7000),
      'a stop and target of 0.07 alone working at the broker',
    );
    expect(protection(opening)).toEqual([
      ['sell', '2', 1.1092, 7000],
      ['sell', '3', 1.1032, 7000],
    ]);
    await waitUntil(async () => {
      const positions = (await bed.state())?.positions ?? [];
      return positions.length === 1 && positions[0].position === ticket && positions[0].volume === 0.07;
    }, 'the 0.07 left as the one position in the published state');
    // What is left is closed by the next close, whole.
    const next = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy');
    expect((await bed.settled(next)).message).toMatch(
      new RegExp(`^closed buy 0\\.07 EURUSD .*position ${ticket}|^closed .*position ${ticket}`),
    );
    await waitUntil(
      async () => ((await bed.state())?.positions ?? []).length === 0 && protection(opening).length === 0,
      'flat, nothing working at the broker',
    );
    expect(bed.broker.netUnits('EURUSD')).toBe(0);
  }, 120_000);

  it("filled whole while the agent was dead: the outcome says closed at the broker's price, the stop and target cancelled, the book flat", async () => {
    const { opening, ticket, closeId, delivery } = await closeWhileKilled('EURUSD,closebuy', null);
    expect(bed.sent('D').filter((m) => m.ClOrdID === closeId)).toHaveLength(1);
    expect(bed.broker.order(closeId)).toMatchObject({ cumUnits: 10000, avgPx: 1.105, status: '2' });
    expect(delivery.status).toBe('executed');
    expect(delivery.result.events[0]).toMatchObject({ type: 'closed', position: ticket, volume: 0.1, price: 1.105 });
    expect(delivery.message).not.toContain('did not say the price');
    expect(bed.broker.netUnits('EURUSD')).toBe(0);
    await waitUntil(() => protection(opening).length === 0, 'the stop and target cancelled at the broker');
    await waitUntil(
      async () => ((await bed.state())?.positions ?? []).length === 0,
      'no position in the published state',
    );
  }, 120_000);
});
