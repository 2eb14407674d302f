import { describe, expect, it } from 'vitest';
import { startTestServer } from '../support/start-test-server.js';
import { accountWithAgents, agentRequest, waitUntil } from './support/delivery-setup.js';
import { RawSocket } from './support/raw-socket.js';

describe('server close with agents connected', () => {
  it('answers waiting polls and closes sockets with 1001 (going away) instead of waiting for them', async () => {
    const server = await startTestServer();
    // Two agents: one agent's poll beside its own open session would be refused (409).
    const [pushed, polling] = (await accountWithAgents(server, ['mt5', 'poller'])).agents;
    const socket = await RawSocket.open(server.url, pushed!.token);
    await socket.next((m) => m.type === 'hello');
    const polled = Date.now();
    const poll = agentRequest(server.url, polling!.token, 'GET', '/api/agent/signals?wait=30');
    // The poll is being served once the agent shows as seen (recorded as its wait starts), not
    // after a fixed pause: a poll that had not arrived would find the server gone.
    await waitUntil(
      async () => (await server.admin('GET', `/api/admin/agents/${polling!.id}`)).body.lastSeenAt !== null,
      'the poll to reach the server',
    );

    await server.stop();
    expect(await socket.closed).toBe(1001);
    const answer = await poll;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ signals: [] });
    // Answered by the close, not by its 30 s wait running out (the longest a poll may ask for,
    // so no load stretches the steps above that far).
    expect(Date.now() - polled, 'answered before its 30 s wait ran out').toBeLessThan(30_000);
  });
});
