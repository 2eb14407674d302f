import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { placedLong, protectingOrder, protectionAt, useFix44Bed } from './support/fix44-bed.js';

/**
 * A broker's ExecutionReports that cross on the wire with a session-level exchange: they arrive
 * while the agent is still answering the broker's ResendRequest, or waiting for the Heartbeat its
 * own TestRequest asked for. They are business as usual, not a reason to drop the session.
 */
describe('ExecutionReports crossing session-level messages at a plain FIX 4.4 broker', () => {
  // The broker's Logon says 2 s: the agent asks whether it is there after 3 s without a word.
  const bed = useFix44Bed({ brokerHeartbeatSeconds: 2 });
  let agent: AgentProcess;

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  const sessionLosses = () => agent.lines().filter((l) => l.msg === 'FIX session lost');

  it("amid the broker's ResendRequest: the session stays logged on, the entry opens and is protected, and the request is answered", async () => {
    const logons = bed.broker.logons.length;
    bed.broker.askResendWithReports = true;
    const signal = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.1,sl_pips=20');
    expect((await bed.settled(signal)).result.events[0]).toMatchObject({ type: 'opened', price: 1.1052 });
    bed.broker.askResendWithReports = false;
    await expect
      .poll(() => protectingOrder(bed.broker, clientOrderId(signal, 'o'), '3')?.price, { timeout: 20_000 })
      .toBe(1.1032);
    expect(sessionLosses()).toEqual([]);
    expect(bed.broker.logons.length).toBe(logons);
    expect(agent.lines().some((l) => l.fixSession === 'trade' && /resend/i.test(l.msg))).toBe(true);
    expect((await bed.state()).fixSessions.trade.loggedOn).toBe(true);
  });

  it("amid the agent's TestRequest to a quiet broker: the fill that crosses it is taken, the session stays logged on", async () => {
    const logons = bed.broker.logons.length;
    const entryId = await placedLong(bed);
    let asked = 0;
    // Quiet until the agent asks, then the entry's fill goes out ahead of the Heartbeat it asked for.
    bed.broker.onTestRequest = () => {
      asked += 1;
      bed.broker.onTestRequest = null;
      bed.broker.silent = false;
      bed.broker.fill(entryId, 5000, 1.104);
    };
    bed.broker.silent = true;
    await waitUntil(
      () => protectionAt(bed.broker, entryId).length === 2,
      'the stop and target of the filled entry',
      30_000,
    );
    expect(asked).toBe(1);
    expect(sessionLosses()).toEqual([]);
    expect(bed.broker.logons.length).toBe(logons);
    expect((await bed.state()).fixSessions.trade.loggedOn).toBe(true);
  });
});
