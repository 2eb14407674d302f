import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { deliveriesOf, postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { useFix44Bed } from './support/fix44-bed.js';

/** The source's maxSignalAgeSeconds here: long enough for a signal to reach the agent on a loaded machine. */
const AGE_S = 6;

/**
 * The signal's age is checked immediately before each entry leaves, retries and restarts
 * included; closes, cancels and stops never wait on it. A plain FIX 4.4 broker that goes away
 * (stopped) while a signal waits, and an agent killed the moment the broker receives its order.
 */
describe("the signal's age at a plain FIX 4.4 broker", () => {
  const bed = useFix44Bed({ maxSignalAgeSeconds: AGE_S, prices: { GBPUSD: { bid: 1.27, ask: 1.2702 } } });
  let agent: AgentProcess;

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  const settledAny = async (signal: string, timeoutMs = 60_000) => {
    await waitUntil(
      async () => !['queued', 'delivered'].includes((await deliveriesOf(bed.server, signal))[0].status),
      `the ack of ${signal}`,
      timeoutMs,
    );
    return (await deliveriesOf(bed.server, signal))[0];
  };

  /** Stops the broker and waits until the agent knows it is gone. */
  const brokerDown = async () => {
    const from = agent.lines().length;
    bed.broker.stop();
    await agent.waitForLog(
      (l) => agent.lines().indexOf(l) >= from && l.msg === 'FIX session down; reconnecting',
      'the session down',
      30_000,
    );
  };

  /** Starts the broker again and waits until the agent has logged on to it. */
  const brokerUp = async () => {
    const from = agent.lines().length;
    bed.broker.start();
    await agent.waitForLog(
      (l) => agent.lines().indexOf(l) >= from && l.msg === 'FIX logged on',
      'the session back',
      60_000,
    );
  };

  it('an entry whose signal expires while the broker is unreachable is never sent: rejected, saying since when the venue was unreachable', async () => {
    await brokerDown();
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.1,sl_pips=20');
    await agent.waitForLog(
      (l) => l.msg === `the venue is unreachable; will execute signal ${signal} when it answers`,
      'the signal waiting for the venue',
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, AGE_S * 1000 + 500));
    // The broker back after the signal expired: the old agent sent the order now, hours late had it been hours.
    await brokerUp();
    const delivery = await settledAny(signal);
    expect(delivery.status).toBe('rejected');
    expect(delivery.message).toMatch(
      new RegExp(
        `^the signal expired at ${delivery.expiresAt.replace(/[.]/g, '\\.')} while the venue was unreachable since \\d{4}-\\d\\d-\\d\\dT[0-9:.]+Z; its buy order was not sent$`,
      ),
    );
    expect(bed.sent('D').filter((m) => m.ClOrdID === clientOrderId(signal, 'o'))).toEqual([]);
    expect(bed.broker.netUnits('EURUSD')).toBe(0);
  });

  it('a close whose signal expires while the broker is unreachable is still sent when it answers: reducing risk is never too late', async () => {
    const opening = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.1,sl_pips=20');
    await bed.settled(opening);
    expect(bed.broker.netUnits('EURUSD')).toBe(10000);
    await brokerDown();
    const close = await postSignal(bed.server.url, bed.authKey, 'EURUSD,closebuy');
    await agent.waitForLog(
      (l) => l.msg === `the venue is unreachable; will execute signal ${close} when it answers`,
      'the close waiting for the venue',
      30_000,
    );
    await new Promise((resolve) => setTimeout(resolve, AGE_S * 1000 + 500));
    await brokerUp();
    const delivery = await settledAny(close);
    expect(delivery.status).toBe('executed');
    expect(delivery.result.events[0]).toMatchObject({ type: 'closed', volume: 0.1 });
    expect(bed.broker.netUnits('EURUSD')).toBe(0);
  });

  it('killed after sending an entry, restarted past its age: the order is looked up first and the book adopts what the broker filled, protected', async () => {
    const killed = bed.killAgentWhenBrokerReceives(
      agent,
      (type, m) => type === 'D' && m.OrdType === '1' && m.Side === '1',
    );
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.2,sl_pips=20');
    expect((await killed).ClOrdID).toBe(clientOrderId(signal, 'o'));
    // The broker filled it while the agent was dead; the signal is past its age when the agent is back.
    await new Promise((resolve) => setTimeout(resolve, AGE_S * 1000 + 500));
    agent = await bed.startReady();
    const delivery = await settledAny(signal);
    expect(delivery.status).toBe('executed');
    expect(delivery.ackedAfterExpiry).toBe(true);
    expect(delivery.result.events[0]).toMatchObject({ type: 'opened', side: 'buy', volume: 0.2, price: 1.1052 });
    expect(delivery.message).toContain('the signal had expired when the agent came back to it');
    // Sent once; the position in the book and the published state, its stop at the broker.
    expect(bed.sent('D').filter((m) => m.ClOrdID === clientOrderId(signal, 'o'))).toHaveLength(1);
    expect(bed.broker.netUnits('EURUSD')).toBe(20000);
    await waitUntil(
      async () =>
        ((await bed.state())?.positions ?? []).some(
          (p: { volume: number; sl: number }) => p.volume === 0.2 && p.sl === 1.1032,
        ),
      'the adopted position in the published state',
    );
    expect(
      bed.broker
        .working()
        .filter((o) => o.clOrdId.startsWith(clientOrderId(signal, 'o').slice(0, 18)))
        .map((o) => [o.side, o.ordType, o.price, o.units]),
    ).toEqual([['sell', '3', 1.1032, 20000]]);
  });

  it('killed while it asked for the quote, before anything of the signal was written or sent, restarted past its age: the server lets it expire, nothing sent', async () => {
    // Killed asking for its first GBPUSD quote: the signal goes on disk with that quote, once read
    // (one write before the order), so nothing of it is on disk yet and no order was sent.
    const killed = bed.killAgentWhenBrokerReceives(
      agent,
      (type, m) => type === 'V' && JSON.stringify(m).includes('GBPUSD'),
    );
    const signal = await postSignal(bed.server.url, bed.authKey, 'GBPUSD,buy,vol=0.1');
    await killed;
    await new Promise((resolve) => setTimeout(resolve, AGE_S * 1000 + 500));
    agent = await bed.startReady();
    const delivery = await settledAny(signal);
    expect(delivery.status).toBe('expired');
    // Never sent, before or after the restart.
    expect(bed.sent('D').filter((m) => m.ClOrdID === clientOrderId(signal, 'o'))).toEqual([]);
    expect(bed.broker.netUnits('GBPUSD')).toBe(0);
  });
});
