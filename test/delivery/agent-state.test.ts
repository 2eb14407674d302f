import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { accountWithAgents, agentRequest, type TestAgent } from './support/delivery-setup.js';

describe('PUT /api/agent/state and presence', () => {
  let server: TestServer;
  let agent: TestAgent;

  beforeAll(async () => {
    server = await startTestServer();
    agent = (await accountWithAgents(server, ['mt5'])).agents[0]!;
  });
  afterAll(() => server.stop());

  it('shows no lastSeenAt before the agent called, and the time of its first request after', async () => {
    expect((await server.admin('GET', `/api/admin/agents/${agent.id}`)).body).toMatchObject({
      lastSeenAt: null,
      state: null,
    });
    const before = Date.now();
    expect((await agentRequest(server.url, agent.token, 'GET', '/api/agent/signals')).status).toBe(200);
    const seen = (await server.admin('GET', `/api/admin/agents/${agent.id}`)).body.lastSeenAt;
    expect(Date.parse(seen)).toBeGreaterThanOrEqual(before - 5);
  });

  it('keeps the latest snapshot for the admin agent view', async () => {
    const snapshot = {
      balance: 10_000,
      equity: 10_012.5,
      currency: 'USD',
      positions: [{ position: 1, symbol: 'EURUSD', side: 'buy', volume: 0.1, price: 1.085, sl: 1.083, comment: null }],
      orders: [],
    };
    expect(
      (await agentRequest(server.url, agent.token, 'PUT', '/api/agent/state', { ...snapshot, balance: 9_000 })).status,
    ).toBe(200);
    expect((await agentRequest(server.url, agent.token, 'PUT', '/api/agent/state', snapshot)).status).toBe(200);
    const view = (await server.admin('GET', `/api/admin/agents/${agent.id}`)).body;
    expect(view).toMatchObject({ id: agent.id, name: 'mt5', state: snapshot });
    expect(view.lastSeenAt).not.toBeNull();
  });

  it.each([
    [[1, 2], 400, 'INVALID_REQUEST'],
    [{ balance: 'lots' }, 422, 'INVALID_FIELD'],
    [{ positions: {} }, 422, 'INVALID_FIELD'],
    [{ currency: 840 }, 422, 'INVALID_FIELD'],
  ])('refuses the snapshot %j (%i %s) and keeps the previous one', async (body, status, code) => {
    const res = await agentRequest(server.url, agent.token, 'PUT', '/api/agent/state', body);
    expect(res.status).toBe(status);
    expect(res.body.code).toBe(code);
    expect((await server.admin('GET', `/api/admin/agents/${agent.id}`)).body.state.equity).toBe(10_012.5);
  });
});
