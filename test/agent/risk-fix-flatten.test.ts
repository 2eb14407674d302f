import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NormalizedSignal } from '../../src/language/index.js';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { CTraderCounterparty } from '../fakes/ctrader-counterparty.js';
import { freePort } from '../support/free-port.js';
import { AgentEndpoints } from './support/agent-endpoints.js';
import { AgentProcess } from './support/agent-process.js';
import { AGENT_COMP_ID, CREDENTIALS, EURUSD } from './support/ctrader-bed.js';

/**
 * A flatten and a risk refusal on a FIX broker: a real `signalgate agent --venue fix` process
 * against the cTrader-style counterparty, its deliveries handed out by a stand-in of the
 * server's agent endpoints.
 */
describe('an agent on a cTrader-style FIX broker', () => {
  let endpoints: AgentEndpoints;
  let broker: CTraderCounterparty;
  let agent: AgentProcess;
  let dir = '';
  beforeAll(async () => {
    endpoints = await AgentEndpoints.start();
    broker = new CTraderCounterparty({
      tradePort: await freePort(),
      quotePort: await freePort(),
      agentCompId: AGENT_COMP_ID,
      credentials: CREDENTIALS,
      prices: { [EURUSD]: { bid: 1.105, ask: 1.1052 } },
    });
    broker.start();
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-risk-fix-'));
    const config = path.join(dir, 'fix.json');
    writeFileSync(config, JSON.stringify(broker.agentConfig(10000)));
    agent = AgentProcess.startVenue(
      endpoints.url,
      'sga_risk',
      path.join(dir, 'agent'),
      ['--venue', 'fix', '--fix-config', config, '--transport', 'long-poll'],
      { SIGNALGATE_FIX_USERNAME: CREDENTIALS.user, SIGNALGATE_FIX_PASSWORD: CREDENTIALS.password },
    );
    await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 40_000);
  });
  afterAll(async () => {
    await agent?.kill();
    broker?.stop();
    await endpoints?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  async function send(signal: NormalizedSignal, extra: Parameters<AgentEndpoints['deliver']>[1] = {}) {
    const id = endpoints.deliver(signal, extra);
    await waitUntil(() => endpoints.acks.has(id), `the ack of ${id}`, 30_000);
    return endpoints.acks.get(id)!;
  }

  it('refuses an entry above a limit, then a flatten closes every position and cancels every order', async () => {
    const risk = { tradingWindows: [], maxLotsPerOrder: 0.1 };
    const buy = (lots: number): NormalizedSignal => ({
      symbol: 'EURUSD',
      action: 'buy',
      volume: { type: 'lots', value: lots },
      sl: { type: 'pips', value: 20 },
    });
    expect((await send(buy(0.1), { risk })).status).toBe('executed');
    expect(await send(buy(0.2), { risk })).toMatchObject({ status: 'rejected', result: { code: 'RISK_LIMIT' } });
    const limit: NormalizedSignal = {
      symbol: 'EURUSD',
      action: 'buylimit',
      volume: { type: 'lots', value: 0.05 },
      entry: { type: 'price', value: 1.1 },
    };
    expect((await send(limit)).status).toBe('executed');
    expect(broker.positions.size).toBe(1);
    // The stop of the position and the pending entry.
    expect(broker.resting.size).toBe(2);
    const flat = await send({ symbol: '*', action: 'positionflat' }, { flatten: { reason: 'halted' } });
    expect(flat).toMatchObject({ status: 'executed' });
    expect([...broker.positions.values()].filter((p) => p.units > 0)).toEqual([]);
    expect(broker.resting.size).toBe(0);
  });
});
