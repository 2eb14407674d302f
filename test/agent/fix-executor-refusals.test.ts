import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { deliveriesOf, postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import { AgentProcess } from './support/agent-process.js';
import { type ExecutorBed, startExecutorBed } from './support/executor-bed.js';

/**
 * What QuickFIX's executor refuses, through a real agent process: stop orders (a session Reject,
 * 35=3) and market data (a session Reject of the MarketDataRequest). The agent must never
 * publish a position as protected by a stop the broker refused, and a broker that gives no
 * quotes must be a visible state in which orders that need no quote still go out.
 */
const CREDENTIALS = { user: 'trader-x', password: 'pw-x-554' };

interface Bed extends ExecutorBed {
  agent: AgentProcess;
  state(): Promise<any>;
  settled(signal: string, status: string): Promise<any>;
}

/** The executor as the trade session, an agent on it; `withQuotes` adds a quote session that prices EURUSD, else quotes are asked of the executor. */
async function bed(compId: string, withQuotes: boolean): Promise<Bed> {
  const fix = await startExecutorBed({
    compId,
    credentials: CREDENTIALS,
    agentName: compId.toLowerCase(),
    heartbeatSeconds: 5,
    quotes: withQuotes,
    dirPrefix: 'signalgate-fix-refusals-',
  });
  const agent = fix.startAgent();
  try {
    await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 90_000);
  } catch (error) {
    await agent.kill();
    await fix.stop();
    throw error;
  }
  const { server, agentId } = fix;
  return {
    ...fix,
    agent,
    state: async () => (await server.admin('GET', `/api/admin/agents/${agentId}`)).body.state,
    settled: async (signal, status) => {
      await waitUntil(
        async () => (await deliveriesOf(server, signal))[0].status === status,
        `the ${status} ack of ${signal}`,
        40_000,
      );
      return (await deliveriesOf(server, signal))[0];
    },
  };
}

async function teardown(b: Bed | undefined): Promise<void> {
  await b?.agent.kill();
  await b?.stop();
}

describe('a stop the broker refuses (QuickFIX executor: 35=3 for stop orders)', () => {
  let b: Bed | undefined;
  beforeAll(async () => {
    b = await bed('SGSTOP', true);
  }, 90_000);
  afterAll(() => teardown(b));

  it("the entry fills, the broker refuses its stop, and the agent says so at error level with the broker's reason", async () => {
    const signal = await postSignal(b!.server.url, b!.authKey, 'EURUSD,buylimit,vol=0.1,entry_price=1.1,sl_price=1.07');
    await b!.settled(signal, 'executed');
    // The executor filled the limit at once and refused the stop order (40=3) with a session Reject.
    await waitUntil(() => b!.executor.output.includes('Value is incorrect'), 'the session Reject of the stop', 30_000);
    await waitUntil(
      async () => (await b!.state())?.positions?.length === 1,
      'the position in the published state',
      30_000,
    );
    // The FIX venue says at error level that the broker refused the stop and the position stands unprotected.
    const refused = await b!.agent.waitForLog(
      (l) => l.level >= 50 && /stop/i.test(l.msg) && /refused/i.test(l.msg),
      'the refusal at error level',
      30_000,
    );
    expect(refused.msg).toMatch(/Value is incorrect/);
    expect(refused.msg).toMatch(/NOT protected/);
  }, 120_000);

  // Needs the published `unprotected` field (the agent's handling of refused stops, on another branch).
  it("the filled entry is published as unprotected with the broker's reason, never with its stop as if it stood", async () => {
    await waitUntil(
      async () => (await b!.state())?.positions?.[0]?.unprotected !== undefined,
      'the position published as unprotected',
      30_000,
    ).catch(() => undefined);
    const published = (await b!.state()).positions[0];
    expect(published).toMatchObject({ side: 'buy', volume: 0.1, price: 1.1 });
    expect(published.unprotected).toMatchObject({
      reason: expect.stringMatching(/Value is incorrect/),
      attempts: expect.any(Number),
    });
  }, 120_000);
});

describe('a broker that refuses market data (QuickFIX executor: 35=3 for MarketDataRequest)', () => {
  let b: Bed | undefined;
  beforeAll(async () => {
    b = await bed('SGNOMD', false);
  }, 90_000);
  afterAll(() => teardown(b));

  it("a signal that needs a quote is rejected with the broker's reason; the published state says quotes are refused", async () => {
    const signal = await postSignal(b!.server.url, b!.authKey, 'EURUSD,buy,vol=0.1');
    const delivery = await b!.settled(signal, 'rejected');
    expect(delivery.message).toMatch(/quote/);
    expect(delivery.message).toMatch(/tag appears more than once|269/i);
    await waitUntil(
      async () => (await b!.state())?.quotesRefused !== undefined,
      'the refusal in the published state',
      20_000,
    );
    const state = await b!.state();
    expect(state.connected).toBe(true);
    expect(state.quotesRefused).toMatchObject({ EURUSD: { reason: expect.stringMatching(/269/) } });
  }, 90_000);

  it('a limit order sized in lots needs no quote: it goes out and the executor fills it', async () => {
    const signal = await postSignal(b!.server.url, b!.authKey, 'EURUSD,buylimit,vol=0.2,entry_price=1.1');
    const delivery = await b!.settled(signal, 'executed');
    expect(delivery.message).toMatch(/^placed buy limit 0\.2 EURUSD at 1\.1/);
    expect(delivery.result.orders).toMatchObject([{ kind: 'limit', status: 'filled', filled: 0.2, average: 1.1 }]);
    await waitUntil(async () => (await b!.state())?.positions?.length === 1, 'the filled limit as a position', 30_000);
  }, 90_000);

  it('a limit order whose entry is in pips from the market needs a quote: rejected with the reason, not held', async () => {
    const relative = await postSignal(b!.server.url, b!.authKey, 'EURUSD,selllimit,vol=0.1,entry_pips=20');
    const rejected = await b!.settled(relative, 'rejected');
    expect(rejected.message).toMatch(/quote/);
  }, 90_000);
});
