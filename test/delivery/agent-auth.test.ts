import WebSocket from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/start-test-server.js';
import {
  accountWithAgents,
  agentRequest,
  deliveriesOf,
  postSignal,
  sourceFor,
  type TestAgent,
} from './support/delivery-setup.js';

/** The status a WebSocket upgrade to the agent endpoint is answered with (101 when it opens). */
function upgradeStatus(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`${url.replace('http', 'ws')}/api/agent/ws`, { headers });
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
      ws.terminate();
    });
    ws.on('open', () => {
      resolve(101);
      ws.close();
    });
    ws.on('error', (err) => reject(err));
  });
}

describe('agent tokens', () => {
  let server: TestServer;
  let alice: TestAgent;
  let bob: TestAgent;
  let authKey: string;

  beforeAll(async () => {
    server = await startTestServer();
    const account = await accountWithAgents(server, ['alice', 'bob']);
    [alice, bob] = account.agents as [TestAgent, TestAgent];
    authKey = (await sourceFor(server, account.accountId, { agentIds: [alice.id] })).authKey;
  });
  afterAll(() => server.stop());

  const wrongTokens: Array<[string, string | null]> = [
    ['missing', null],
    ['wrong', 'sga_not-a-real-token'],
    ['the admin token', TEST_ADMIN_TOKEN],
  ];

  it.each(wrongTokens)('answers 401 on every agent endpoint when the token is %s', async (_label, token) => {
    const requests: Array<[string, string, unknown?]> = [
      ['GET', '/api/agent/signals?wait=5'],
      ['POST', '/api/agent/signals/sig_x/ack', { status: 'executed' }],
      ['PUT', '/api/agent/state', { balance: 1 }],
    ];
    for (const [method, path, body] of requests) {
      const res = await agentRequest(server.url, token, method, path, body);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect(res.contentType).toContain('application/problem+json');
      expect(res.body.code).toBe('UNAUTHORIZED');
    }
  });

  it('answers 401 before reading a body it would not accept', async () => {
    const res = await fetch(`${server.url}/api/agent/signals/sig_x/ack`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(res.status).toBe(401);
  });

  it.each(wrongTokens)('refuses the WebSocket upgrade with 401 when the token is %s', async (_label, token) => {
    expect(await upgradeStatus(server.url, token === null ? {} : { authorization: `Bearer ${token}` })).toBe(401);
  });

  it('opens the WebSocket for a valid token', async () => {
    expect(await upgradeStatus(server.url, { authorization: `Bearer ${alice.token}` })).toBe(101);
  });

  it("does not let one agent take or acknowledge another agent's signal", async () => {
    const id = await postSignal(server.url, authKey, 'EURUSD,buy');
    expect((await agentRequest(server.url, bob.token, 'GET', '/api/agent/signals')).body.signals).toEqual([]);
    const ack = await agentRequest(server.url, bob.token, 'POST', `/api/agent/signals/${id}/ack`, {
      status: 'executed',
    });
    expect(ack.status).toBe(404);
    expect(ack.body.code).toBe('NOT_FOUND');
    const [delivery] = await deliveriesOf(server, id);
    // Alice's WebSocket from the test before may still be closing and take it (at least once);
    // what matters is that it stays Alice's and unacknowledged.
    expect(delivery).toMatchObject({ agentId: alice.id, ackedAt: null });
    expect(['queued', 'delivered']).toContain(delivery!.status);
  });
});
