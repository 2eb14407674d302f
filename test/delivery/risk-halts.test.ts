import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { accountWithAgents, agentRequest, postSignal, sourceFor, type TestAgent } from './support/delivery-setup.js';
import { RawSocket } from './support/raw-socket.js';

/** Posts a text signal; answers the inbound answer's status and body. */
async function post(url: string, authKey: string, text: string): Promise<{ status: number; body: any }> {
  const res = await fetch(`${url}/api/inbound/${authKey}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: text,
  });
  return { status: res.status, body: await res.json() };
}

const PROP_FIRM = {
  maxDailyLoss: { percent: 5 },
  maxTotalLoss: { percent: 10, startingBalance: 100000 },
  dayTimeZone: 'Europe/London',
  tradingWindow: {
    timeZone: 'Europe/London',
    days: ['mon', 'tue', 'wed', 'thu', 'fri'],
    from: '07:00',
    until: '21:00',
  },
  maxLotsPerOrder: 2,
};

// Both ingest paths of the embedded store (its inbound thread and the event-loop lane), and
// PostgreSQL's ingest function when the run is on PostgreSQL.
const LANES = process.env.SIGNALGATE_TEST_STORE === 'postgres' ? (['auto'] as const) : (['on', 'off'] as const);

describe.each(LANES)('risk rules and halts at the door (inbound thread: %s)', (inboundThread) => {
  let server: TestServer;
  let agents: TestAgent[];
  let accountId: string;
  let source: { id: string; authKey: string };

  beforeAll(async () => {
    server = await startTestServer({ config: { inboundThread } });
    const account = await accountWithAgents(server, ['one', 'two']);
    agents = account.agents;
    accountId = account.accountId;
    source = await sourceFor(server, accountId);
  });
  afterAll(() => server?.stop());

  const take = (agent: TestAgent) => agentRequest(server.url, agent.token, 'GET', '/api/agent/signals');

  it('refuses bad rules field by field, and hands the rules narrowed by the source to the agent with the signal', async () => {
    const bad = await server.admin('PUT', `/api/admin/accounts/${accountId}/risk-rules`, {
      maxLotsPerOrder: -1,
      maxDailyLoss: { percent: 500 },
      maxTotalLoss: { percent: 10 },
      tradingWindow: { timeZone: 'Europe/Londn', days: ['mon'], from: '7:00', until: '21:00' },
      maxLots: 1,
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((p: { param: string }) => p.param).sort()).toEqual([
      'maxDailyLoss.percent',
      'maxLots',
      'maxLotsPerOrder',
      'maxTotalLoss.startingBalance',
      'tradingWindow.from',
      'tradingWindow.timeZone',
    ]);
    expect((await server.admin('PUT', `/api/admin/accounts/acc_none/risk-rules`, {})).status).toBe(404);

    const set = await server.admin('PUT', `/api/admin/accounts/${accountId}/risk-rules`, PROP_FIRM);
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ accountId, rules: PROP_FIRM, sources: [] });
    const narrowed = await server.admin('PUT', `/api/admin/sources/${source.id}/risk-rules`, {
      maxLotsPerOrder: 5,
      maxOpenPositions: 3,
    });
    // A source's larger limit is kept as set, but the account's smaller one holds.
    expect(narrowed.body.effective).toMatchObject({ maxLotsPerOrder: 2, maxOpenPositions: 3 });
    const shown = await server.admin('GET', `/api/admin/accounts/${accountId}/risk-rules`);
    expect(shown.body.sources).toEqual([expect.objectContaining({ sourceId: source.id })]);

    const id = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1');
    const handed = await take(agents[0]!);
    expect(handed.body.signals).toEqual([
      expect.objectContaining({
        id,
        risk: expect.objectContaining({
          maxLotsPerOrder: 2,
          maxOpenPositions: 3,
          maxDailyLoss: { percent: 5 },
          tradingWindows: [PROP_FIRM.tradingWindow],
        }),
      }),
    ]);
    await agentRequest(server.url, agents[0]!.token, 'POST', `/api/agent/signals/${id}/ack`, {
      status: 'executed',
      message: 'ok',
    });
    // The WebSocket push hands the same rules.
    const socket = await RawSocket.open(server.url, agents[1]!.token);
    const pushed = await socket.waitForSignals(1);
    expect(pushed).toEqual([expect.objectContaining({ id, risk: handed.body.signals[0].risk })]);
    socket.close();
    await socket.closed;
    await agentRequest(server.url, agents[1]!.token, 'POST', `/api/agent/signals/${id}/ack`, { status: 'executed' });

    const audit = await server.admin('GET', `/api/admin/risk-audit?accountId=${accountId}`);
    expect(audit.body.entries.map((e: { action: string; actor: string }) => [e.action, e.actor])).toEqual([
      ['rules_set', 'admin token'],
      ['rules_set', 'admin token'],
    ]);
  });

  it('a halt committed in the middle of a burst of 500 holds for every signal received after its commit', async () => {
    const results: Array<{ startedAfterHalt: boolean; status: number; body: any }> = [];
    let haltCommitted = false;
    let next = 0;
    const send = async (): Promise<void> => {
      while (next < 500) {
        const n = next++;
        const startedAfterHalt = haltCommitted;
        const answer = await post(server.url, source.authKey, `EURUSD,buy,vol=0.01,comment=burst-${n}`);
        results[n] = { startedAfterHalt, ...answer };
        if (n === 250) {
          const halt = await server.admin('POST', `/api/admin/accounts/${accountId}/halt`, { reason: 'mid-burst' });
          expect(halt.status).toBe(201);
          haltCommitted = true;
        }
      }
    };
    await Promise.all(Array.from({ length: 16 }, send));
    expect(results.filter(Boolean)).toHaveLength(500);
    expect(results.every((r) => r.status === 202)).toBe(true);
    const after = results.filter((r) => r.startedAfterHalt);
    expect(after.length).toBeGreaterThan(100);
    expect(after.every((r) => r.body.status === 'halted')).toBe(true);
    // Signals before the halt were queued at the door (the halt then stopped those not handed out).
    expect(results.slice(0, 100).every((r) => r.body.status === 'queued')).toBe(true);

    const logged = await server.admin('GET', `/api/admin/signals/${after[0]!.body.id}`);
    expect(logged.body.outcome).toEqual({ halted: 2 });
    expect(logged.body.deliveries.map((d: { status: string }) => d.status)).toEqual(['halted', 'halted']);

    // Nothing of the burst is delivered, neither while halted nor after the release (by hand).
    for (const agent of agents) expect((await take(agent)).body.signals).toEqual([]);
    const released = await server.admin('POST', `/api/admin/accounts/${accountId}/release`);
    expect(released.status).toBe(200);
    expect(released.body).toMatchObject({ releasedBy: 'admin token', reason: 'mid-burst' });
    for (const agent of agents) expect((await take(agent)).body.signals).toEqual([]);
    const fresh = await post(server.url, source.authKey, 'EURUSD,buy,vol=0.01,comment=after');
    expect(fresh.body.status).toBe('queued');
    for (const agent of agents) {
      const handed = (await take(agent)).body.signals;
      expect(handed.map((s: { id: string }) => s.id)).toEqual([fresh.body.id]);
      await agentRequest(server.url, agent.token, 'POST', `/api/agent/signals/${fresh.body.id}/ack`, {
        status: 'executed',
      });
    }
  });

  it("an agent's report halts its account, audited with the agent as who; a halt with flatten reaches the agents", async () => {
    const bad = await agentRequest(server.url, agents[0]!.token, 'POST', '/api/agent/halt', {
      rule: 'maxLots',
      reason: '',
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((p: { param: string }) => p.param)).toEqual(['rule', 'reason']);
    const halted = await agentRequest(server.url, agents[0]!.token, 'POST', '/api/agent/halt', {
      rule: 'maxDailyLoss',
      reason: 'daily loss 5.1 % reached the limit of 5 %',
    });
    expect(halted.status).toBe(201);
    expect(halted.body.halt).toMatchObject({
      scope: 'account',
      targetId: accountId,
      haltedBy: `agent ${agents[0]!.id}`,
    });
    const again = await agentRequest(server.url, agents[1]!.token, 'POST', '/api/agent/halt', {
      rule: 'maxTotalLoss',
      reason: 'equity 89999 below 90000',
    });
    expect(again.status).toBe(200);
    expect(again.body.alreadyHalted).toBe(true);

    const halts = await server.admin('GET', `/api/admin/halts?accountId=${accountId}`);
    expect(halts.body.halts).toEqual([expect.objectContaining({ reason: expect.stringMatching(/^maxDailyLoss: /) })]);
    expect((await server.admin('POST', `/api/admin/accounts/${accountId}/release`, {})).status).toBe(200);
    expect((await server.admin('POST', `/api/admin/accounts/${accountId}/release`, {})).status).toBe(404);

    // An agent's halt with flatten: only that agent gets the flatten, despite its halt.
    const flatten = await server.admin('POST', `/api/admin/agents/${agents[1]!.id}/halt`, {
      reason: 'runaway',
      flatten: true,
    });
    expect(flatten.status).toBe(201);
    expect(flatten.body.flattens).toEqual([{ signalId: expect.any(String), agentIds: [agents[1]!.id] }]);
    const handed = (await take(agents[1]!)).body.signals;
    expect(handed).toEqual([
      expect.objectContaining({ flatten: { reason: 'runaway' }, signal: { symbol: '*', action: 'positionflat' } }),
    ]);
    expect((await take(agents[0]!)).body.signals).toEqual([]);
    const acked = await agentRequest(server.url, agents[1]!.token, 'POST', `/api/agent/signals/${handed[0].id}/ack`, {
      status: 'executed',
      message: 'closed 0 positions, cancelled 0 orders',
    });
    expect(acked.status).toBe(200);
    const logged = await server.admin('GET', `/api/admin/signals/${handed[0].id}`);
    expect(logged.body.deliveries).toEqual([
      expect.objectContaining({ status: 'executed', message: 'closed 0 positions, cancelled 0 orders' }),
    ]);
    const audit = await server.admin('GET', `/api/admin/risk-audit?accountId=${accountId}&limit=5`);
    expect(audit.body.entries.map((e: { action: string }) => e.action)).toEqual([
      'flatten_queued',
      'halted',
      'released',
      'halted',
      'released',
    ]);
  });
});
