import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { protectionAt, useFix44Bed } from './support/fix44-bed.js';

/**
 * The agent killed the moment its entry reaches a plain FIX 4.4 broker (sequence numbers kept),
 * the broker filling it while the agent is away: at the restart the broker resends the order's
 * ExecutionReports (PossDup) before the signal, never acknowledged, is executed again. The fill
 * must reach the book: the position opened at the broker's price, protected, the order sent once.
 */
describe('a fill the broker resends after the agent was killed', () => {
  const bed = useFix44Bed();
  let agent: AgentProcess;
  // Longer than the bed's own wait: a start on a loaded machine was seen past 40 s.
  const startReady = async () => {
    const started = bed.start();
    await started.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 150_000);
    return started;
  };

  beforeAll(async () => {
    agent = await startReady();
  }, 180_000);

  it('killed as the entry reaches the broker, filled while away: the resent fill opens the position, which gets its stop and target', async () => {
    const placing = bed.killAgentWhenBrokerReceives(agent, (type, m) => type === 'D' && m.OrdType === '2');
    const signal = await postSignal(
      bed.server.url,
      bed.authKey,
      'EURUSD,buylimit,vol=0.05,entry_price=1.104,sl_pips=30,tp_pips=50',
    );
    const entryId = String((await placing).ClOrdID);
    expect(entryId).toBe(clientOrderId(signal, 'o'));
    // The broker fills it whole while nobody is logged on: its reports wait for the resend.
    bed.broker.fill(entryId, 5000, 1.1039);

    agent = await startReady();
    const delivery = await bed.settled(signal);
    expect(delivery.message).toMatch(/^placed buy limit 0\.05 EURUSD at 1\.104/);
    expect(bed.sent('D').filter((m) => m.ClOrdID === entryId)).toHaveLength(1);
    // The fill is the book's: the position at the broker's price, its stop and target working at the broker.
    await waitUntil(
      async () => {
        const state = await bed.state();
        return state?.orders?.length === 0 && state.positions?.length === 1;
      },
      'the filled entry as the one position in the published state',
      40_000,
    );
    expect((await bed.state()).positions).toMatchObject([{ side: 'buy', volume: 0.05, price: 1.1039, sl: 1.101 }]);
    const protection = () => protectionAt(bed.broker, entryId);
    await waitUntil(() => protection().length === 2, 'the stop and target working at the broker', 30_000);
    expect(protection()).toEqual([
      ['sell', '2', 1.109, 5000],
      ['sell', '3', 1.101, 5000],
    ]);
    expect(
      agent
        .lines()
        .some(
          (l) =>
            /which the book does not hold/.test(l.msg ?? '') || /which the book does not hold/.test(JSON.stringify(l)),
        ),
    ).toBe(false);
  }, 400_000);
});
