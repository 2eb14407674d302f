import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { accountWithAgents, agentRequest, postSignal, sourceFor, type TestAgent } from './support/delivery-setup.js';
import { RawSocket } from './support/raw-socket.js';

describe('the limits of an agent WebSocket session', () => {
  let server: TestServer;
  let agent: TestAgent;
  let authKey: string;

  beforeAll(async () => {
    server = await startTestServer();
    const account = await accountWithAgents(server, ['mt5']);
    agent = account.agents[0]!;
    authKey = (await sourceFor(server, account.accountId)).authKey;
  });
  afterAll(() => server.stop());

  /** Opens a session and waits for its greeting; the previous session must be closed. */
  async function session(): Promise<RawSocket> {
    const socket = await RawSocket.open(server.url, agent.token);
    await socket.next((m) => m.type === 'hello');
    return socket;
  }

  it('a message nested too deep or holding too many values is answered with a problem naming its field, and the session goes on', async () => {
    const socket = await session();
    let from = socket.messages.length;
    socket.sendRaw(`{"type":"state","state":{"balance":1,"positions":${'['.repeat(63)}${']'.repeat(63)}}}`);
    expect(await socket.next((m) => m.type === 'result', from)).toMatchObject({
      status: 400,
      body: {
        code: 'INVALID_REQUEST',
        param: 'state',
        detail: expect.stringContaining('nested more than 64 levels deep'),
      },
    });
    from = socket.messages.length;
    socket.sendRaw(`{"type":"state","state":{"positions":[${'0,'.repeat(10_000)}0]}}`);
    expect(await socket.next((m) => m.type === 'result', from)).toMatchObject({
      status: 413,
      body: { code: 'PAYLOAD_TOO_LARGE', param: 'state', detail: expect.stringContaining('more than 10000 values') },
    });
    // Within the limits: taken.
    const state = { balance: 1, positions: [JSON.parse(`${'['.repeat(61)}${']'.repeat(61)}`)] };
    expect(await socket.request({ type: 'state', state })).toMatchObject({ status: 200 });
    socket.close();
    await socket.closed;
  });

  it('a message over 64 KiB closes the session with 1009 before it is read; the agent reconnects and is served', async () => {
    const socket = await session();
    socket.sendRaw(JSON.stringify({ type: 'state', state: { note: 'x'.repeat(64 * 1024) } }));
    expect(await socket.closed).toBe(1009);
    const again = await session();
    const id = await postSignal(server.url, authKey, 'EURUSD,buy');
    await again.waitForSignals(1);
    expect(await again.request({ type: 'ack', id, status: 'executed' })).toMatchObject({ status: 200 });
    again.close();
    await again.closed;
  });

  it('a client that sends far more messages than it waits for is closed with 1008 and a reason naming the code; the server keeps serving', async () => {
    const socket = await session();
    const state = JSON.stringify({
      type: 'state',
      state: { balance: 1, equity: 1, currency: 'USD', positions: [], orders: [] },
    });
    for (let i = 0; i < 2_000; i++) socket.sendRaw(state);
    expect(await socket.closed).toBe(1008);
    expect(socket.closeReason).toMatch(/^INVALID_REQUEST: too many messages waiting/);
    // Fewer answers than messages: what was still waiting was dropped.
    expect(socket.messages.filter((m) => m.type === 'result').length).toBeLessThan(2_000);
    expect((await agentRequest(server.url, agent.token, 'GET', '/api/agent')).status).toBe(200);
    const again = await session();
    expect(await again.request({ type: 'state', state: JSON.parse(state).state })).toMatchObject({ status: 200 });
    again.close();
    await again.closed;
  });
});
