import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { within } from '../support/within.js';
import {
  accountWithAgents,
  agentRequest,
  deliveriesOf,
  postSignal,
  sourceFor,
  type TestAgent,
} from './support/delivery-setup.js';
import { RawSocket } from './support/raw-socket.js';

/**
 * One agent token used by two processes at once must not execute each signal twice: the
 * server keeps at most one WebSocket session per agent, refuses a second one (4409), and
 * refuses long-polls and state updates of that agent while the session is open.
 */
describe('one WebSocket session per agent', () => {
  let server: TestServer;
  let agents: TestAgent[];
  /** One source per agent, so each test sees only its own agent's signals. */
  let authKeys: string[];

  beforeAll(async () => {
    server = await startTestServer();
    const account = await accountWithAgents(server, ['desk', 'laptop', 'restarting']);
    agents = account.agents;
    authKeys = [];
    for (const agent of agents)
      authKeys.push((await sourceFor(server, account.accountId, { agentIds: [agent.id] })).authKey);
  });
  afterAll(() => server.stop());

  it('refuses a second connection with 4409, keeps pushing to the first, and hands its unacknowledged signals to the next one after it closes', async () => {
    const agent = agents[0]!;
    const authKey = authKeys[0]!;
    const first = await RawSocket.open(server.url, agent.token);
    await first.next((m) => m.type === 'hello');
    const unacked = await postSignal(server.url, authKey, 'EURUSD,buy');
    expect((await first.waitForSignals(1)).map((s) => s.id)).toEqual([unacked]);

    const second = await RawSocket.open(server.url, agent.token);
    expect(await within(second.closed, 'the second connection to be refused')).toBe(4409);
    expect(second.closeReason).toMatch(
      /^AGENT_CONNECTED: another connection for this agent is open; stop that process/,
    );
    // Not even the hello: the refused connection learns nothing and is handed nothing.
    expect(second.messages).toEqual([]);

    const acked = await postSignal(server.url, authKey, 'GBPUSD,sell');
    expect((await first.waitForSignals(2)).map((s) => s.id)).toEqual([unacked, acked]);

    // Long-poll and state updates of the agent are refused while its session is open.
    const poll = await agentRequest(server.url, agent.token, 'GET', '/api/agent/signals');
    expect(poll.status).toBe(409);
    expect(poll.contentType).toMatch(/^application\/problem\+json/);
    expect(poll.body).toMatchObject({
      code: 'AGENT_CONNECTED',
      detail: expect.stringContaining('stop the other process'),
    });
    const state = await agentRequest(server.url, agent.token, 'PUT', '/api/agent/state', { balance: 1, positions: [] });
    expect(state).toMatchObject({ status: 409, body: { code: 'AGENT_CONNECTED' } });
    expect((await server.admin('GET', `/api/admin/agents/${agent.id}`)).body.state).toBeNull();
    // Acks stay accepted over HTTP: they report what was already done.
    const ack = await agentRequest(server.url, agent.token, 'POST', `/api/agent/signals/${acked}/ack`, {
      status: 'executed',
    });
    expect(ack.status).toBe(200);
    expect(first.signals().map((s) => s.id)).toEqual([unacked, acked]);
    expect((await deliveriesOf(server, unacked))[0]).toMatchObject({ status: 'delivered', ackedAt: null });

    first.close();
    await first.closed;
    const next = await RawSocket.open(server.url, agent.token);
    await next.next((m) => m.type === 'hello');
    expect((await next.waitForSignals(1)).map((s) => s.id)).toEqual([unacked]);
    expect((await next.request({ type: 'ack', id: unacked, status: 'executed' })).status).toBe(200);
    expect((await deliveriesOf(server, unacked))[0]).toMatchObject({ status: 'executed' });
    // The acknowledged one is not handed out again.
    expect(next.signals().map((s) => s.id)).toEqual([unacked]);
    next.close();
    await next.closed;
    // With no session open, polling works again.
    expect(await agentRequest(server.url, agent.token, 'GET', '/api/agent/signals')).toMatchObject({
      status: 200,
      body: { signals: [] },
    });
  });

  it('answers a poll that was waiting when a session opened with 409, handing it nothing', async () => {
    const agent = agents[1]!;
    const authKey = authKeys[1]!;
    // The longest wait a poll may ask for, so giving way is told from running out by far more
    // than any load can stretch the steps between: no deadline of the server's is measured.
    const started = Date.now();
    const poll = agentRequest(server.url, agent.token, 'GET', '/api/agent/signals?wait=30');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const socket = await RawSocket.open(server.url, agent.token);
    await socket.next((m) => m.type === 'hello');
    const answer = await within(poll, 'the waiting poll to give way', 40_000);
    expect(answer).toMatchObject({ status: 409, body: { code: 'AGENT_CONNECTED' } });
    expect(Date.now() - started, 'answered before its 30 s wait ran out').toBeLessThan(30_000);

    const id = await postSignal(server.url, authKey, 'USDJPY,buy');
    expect((await socket.waitForSignals(1)).map((s) => s.id)).toEqual([id]);
    expect((await deliveriesOf(server, id))[0]).toMatchObject({ status: 'delivered' });
    socket.close();
    await socket.closed;
  });
  it('accepts a poll, a state update and a new connection as soon as the session has closed', async () => {
    // An agent restarting, or falling back to polling, closes its socket and goes on at once:
    // the server must not refuse it for a session it has already closed, whose hold in the
    // store (PostgreSQL) is given back only after the close. Repeated, as that is a race.
    const agent = agents[2]!;
    const authKey = authKeys[2]!;
    for (let round = 0; round < 45; round++) {
      const session = await RawSocket.open(server.url, agent.token);
      await session.next((m) => m.type === 'hello');
      session.close();
      await session.closed;
      if (round % 3 === 0) {
        expect(
          await agentRequest(server.url, agent.token, 'GET', '/api/agent/signals'),
          `poll in round ${round}`,
        ).toMatchObject({
          status: 200,
          body: { signals: [] },
        });
      } else if (round % 3 === 1) {
        const state = await agentRequest(server.url, agent.token, 'PUT', '/api/agent/state', {
          balance: round,
          positions: [],
        });
        expect(state.status, `state update in round ${round}`).toBe(200);
      } else {
        const next = await RawSocket.open(server.url, agent.token);
        const first = await within(
          Promise.race([next.next((m) => m.type === 'hello'), next.closed]),
          `round ${round}'s reconnection`,
        );
        expect(first, `reconnection in round ${round} (a number is its close code)`).toMatchObject({ type: 'hello' });
        const id = await postSignal(server.url, authKey, 'AUDUSD,buy');
        expect((await next.waitForSignals(1)).map((s) => s.id)).toEqual([id]);
        expect((await next.request({ type: 'ack', id, status: 'executed' })).status).toBe(200);
        next.close();
        await next.closed;
      }
    }
  });
});
