import { describe, expect, it } from 'vitest';
import { startTestServer } from '../support/start-test-server.js';
import { accountWithAgents, agentRequest } from './support/delivery-setup.js';
import { RawSocket } from './support/raw-socket.js';

describe('server close with agents connected', () => {
  it('answers waiting polls and closes sockets with 1001 (going away) instead of waiting for them', async () => {
    const server = await startTestServer();
    // Two agents: one agent's poll beside its own open session would be refused (409).
    const [pushed, polling] = (await accountWithAgents(server, ['mt5', 'poller'])).agents;
    const socket = await RawSocket.open(server.url, pushed!.token);
    await socket.next((m) => m.type === 'hello');
    const poll = agentRequest(server.url, polling!.token, 'GET', '/api/agent/signals?wait=30');
    await new Promise((resolve) => setTimeout(resolve, 200));

    // A poll holding for 30 s would otherwise keep the server (and this test) waiting past its timeout.
    await server.stop();
    expect(await socket.closed).toBe(1001);
    const answer = await poll;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ signals: [] });
  }, 20_000);
});
