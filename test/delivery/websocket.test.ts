import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import {
  accountWithAgents,
  agentRequest,
  deliveriesOf,
  postSignal,
  sourceFor,
  type TestAgent,
} from './support/delivery-setup.js';
import { RawSocket } from './support/raw-socket.js';

describe('WebSocket push at /api/agent/ws', () => {
  let server: TestServer;
  let agent: TestAgent;
  let authKey: string;
  let accountId: string;

  beforeAll(async () => {
    server = await startTestServer();
    const account = await accountWithAgents(server, ['mt5']);
    agent = account.agents[0]!;
    accountId = account.accountId;
    authKey = (await sourceFor(server, account.accountId)).authKey;
  });
  afterAll(() => server.stop());

  it('greets, pushes what is pending, then each new signal as it is accepted, in queue order', async () => {
    const before = await postSignal(server.url, authKey, 'EURUSD,buy');
    const socket = await RawSocket.open(server.url, agent.token);
    const hello = await socket.next((m) => m.type === 'hello');
    expect(hello).toEqual({
      type: 'hello',
      agent: { id: agent.id, name: 'mt5', accountId: expect.any(String) },
      window: 100,
    });
    expect((await socket.waitForSignals(1)).map((s) => s.id)).toEqual([before]);

    const live = [
      await postSignal(server.url, authKey, 'GBPUSD,sell,vol=0.2'),
      await postSignal(server.url, authKey, 'USDJPY,buy'),
    ];
    const pushed = await socket.waitForSignals(3);
    expect(pushed.map((s) => s.id)).toEqual([before, ...live]);
    expect(pushed[1]).toMatchObject({
      sourceId: expect.any(String),
      signal: { symbol: 'GBPUSD', action: 'sell', volume: { type: 'lots', value: 0.2 } },
    });
    // The same record as the long-poll answers (polled once the session is over: polling
    // beside an open session is refused).
    socket.close();
    await socket.closed;
    const polled = (await agentRequest(server.url, agent.token, 'GET', '/api/agent/signals')).body.signals;
    expect(polled).toEqual(pushed);

    for (const s of pushed)
      expect(
        (await agentRequest(server.url, agent.token, 'POST', `/api/agent/signals/${s.id}/ack`, { status: 'executed' }))
          .status,
      ).toBe(200);
  });

  it('takes acks and state updates, answering each with a result carrying the HTTP status and body', async () => {
    const id = await postSignal(server.url, authKey, 'XAUUSD,buy');
    const socket = await RawSocket.open(server.url, agent.token);
    await socket.waitForSignals(1);

    const ack = await socket.request({
      type: 'ack',
      id,
      status: 'rejected',
      message: 'market closed',
      result: { code: 10018 },
    });
    expect(ack).toMatchObject({
      type: 'result',
      status: 200,
      body: { signalId: id, status: 'rejected', message: 'market closed' },
    });
    const conflict = await socket.request({ type: 'ack', id, status: 'executed' });
    expect(conflict).toMatchObject({ status: 409, body: { code: 'ALREADY_ACKNOWLEDGED' } });
    expect((await deliveriesOf(server, id))[0]).toMatchObject({ status: 'rejected', result: { code: 10018 } });

    const state = { balance: 5000, equity: 4990, currency: 'EUR', positions: [], orders: [] };
    expect(await socket.request({ type: 'state', state })).toMatchObject({
      status: 200,
      body: { savedAt: expect.any(String) },
    });
    expect((await server.admin('GET', `/api/admin/agents/${agent.id}`)).body.state).toEqual(state);

    expect(await socket.request({ type: 'state', state: 'rich' })).toMatchObject({
      status: 400,
      body: { code: 'INVALID_REQUEST' },
    });
    expect(await socket.request({ type: 'ack', status: 'executed' })).toMatchObject({
      status: 422,
      body: { param: 'id' },
    });
    expect(await socket.request({ type: 'subscribe' })).toMatchObject({
      status: 400,
      body: { param: 'type', detail: '\'type\' must be "ack", "state" or "fills"' },
    });
    const from = socket.messages.length;
    socket.sendRaw('not json');
    expect(await socket.next((m) => m.type === 'result', from)).toMatchObject({ ref: null, status: 400 });
    // Closed before the next test connects as the same agent: a close frame still in flight
    // when the next upgrade arrives (two connections, no order between them) would get it 4409.
    socket.close();
    await socket.closed;
  });

  it('refuses a message giving a field twice, or a state message with fields beside state, and changes nothing', async () => {
    const id = await postSignal(server.url, authKey, 'EURUSD,sell');
    const socket = await RawSocket.open(server.url, agent.token);
    await socket.waitForSignals(1);
    const before = (await server.admin('GET', `/api/admin/agents/${agent.id}`)).body.state;

    // Raw text: JSON.stringify cannot write a key twice, and JSON.parse would keep the last.
    let from = socket.messages.length;
    socket.sendRaw(`{"type":"ack","ref":"twice","id":"${id}","status":"failed","status":"executed"}`);
    expect(await socket.next((m) => m.ref === 'twice', from)).toMatchObject({
      status: 400,
      body: {
        code: 'INVALID_REQUEST',
        param: 'status',
        detail: "'status' is given more than once; send each field once",
      },
    });
    expect((await deliveriesOf(server, id))[0]).toMatchObject({ status: 'delivered', ackedAt: null });

    from = socket.messages.length;
    socket.sendRaw('{"type":"state","ref":"inner","state":{"balance":1,"balance":2}}');
    expect(await socket.next((m) => m.ref === 'inner', from)).toMatchObject({
      status: 400,
      body: { param: 'state.balance' },
    });
    const extra = await socket.request({ type: 'state', state: { balance: 3 }, equity: 3 });
    expect(extra).toMatchObject({ status: 422, body: { code: 'INVALID_FIELD', param: 'equity' } });
    expect((await server.admin('GET', `/api/admin/agents/${agent.id}`)).body.state).toEqual(before);

    expect(await socket.request({ type: 'ack', id, status: 'executed' })).toMatchObject({ status: 200 });
    socket.close();
    await socket.closed;
  });

  it('takes ledger reports, answering as POST /api/agent/fills does, and refuses a malformed one naming its field', async () => {
    const socket = await RawSocket.open(server.url, agent.token);
    await socket.next((m) => m.type === 'hello');
    const trades = async () =>
      (await server.admin('GET', `/api/admin/ledger/trades?accountId=${accountId}`)).body.trades;
    const fill = {
      venueFillId: 'ws-1',
      orderId: 'o-1',
      symbol: 'BTCUSDT',
      side: 'buy',
      lots: 0.5,
      price: 100,
      fee: 0.05,
      feeCurrency: 'USDT',
      at: '2026-12-01T10:00:00.000Z',
      signalId: null,
    };
    try {
      // Each refused whole, nothing recorded: the report missing, a field beside it, a bad entry,
      // a field given twice inside the report.
      expect(await socket.request({ type: 'fills', fills: [fill] })).toMatchObject({
        status: 422,
        body: {
          code: 'INVALID_FIELD',
          param: 'fills',
          detail: "unknown field 'fills'; the fields are type, ref, report",
        },
      });
      expect(await socket.request({ type: 'fills' })).toMatchObject({
        status: 422,
        body: { code: 'INVALID_FIELD', param: 'report', detail: expect.stringContaining('POST /api/agent/fills') },
      });
      expect(await socket.request({ type: 'fills', report: { fills: [{ ...fill, lots: 0 }] } })).toMatchObject({
        status: 422,
        body: { code: 'INVALID_FIELD', param: 'fills[0].lots', detail: "'fills[0].lots' must be above 0" },
      });
      const from = socket.messages.length;
      socket.sendRaw('{"type":"fills","ref":"twice","report":{"fills":[],"fills":[]}}');
      expect(await socket.next((m) => m.ref === 'twice', from)).toMatchObject({
        status: 400,
        body: { code: 'INVALID_REQUEST', param: 'report.fills' },
      });
      expect(await trades()).toEqual([]);

      expect(await socket.request({ type: 'fills', report: { fills: [fill] } })).toMatchObject({
        type: 'result',
        status: 200,
        body: { recorded: 1, known: 0 },
      });
      // Sent again (its answer lost, say): known, not doubled.
      expect(await socket.request({ type: 'fills', report: { fills: [fill], funding: [] } })).toMatchObject({
        status: 200,
        body: { recorded: 0, known: 1 },
      });
      expect(await trades()).toMatchObject([{ symbol: 'BTCUSDT', side: 'long', lots: 0.5, entryPrice: 100 }]);
    } finally {
      socket.close();
      await socket.closed;
    }
  });

  it('answers messages in the order they came, so results without a ref can be matched', async () => {
    const ids = [
      await postSignal(server.url, authKey, 'EURUSD,buy'),
      await postSignal(server.url, authKey, 'GBPUSD,buy'),
    ];
    const socket = await RawSocket.open(server.url, agent.token);
    await socket.waitForSignals(2);
    try {
      const from = socket.messages.length;
      // A valid ack (a commit to wait for) before two messages refused without touching the store.
      socket.sendRaw(JSON.stringify({ type: 'ack', id: ids[0], status: 'executed' }));
      socket.sendRaw('not json');
      socket.sendRaw(JSON.stringify({ type: 'ack', id: ids[1], status: 'maybe' }));
      socket.sendRaw(JSON.stringify({ type: 'ack', id: ids[1], status: 'failed' }));
      await socket.next(() => socket.messages.slice(from).filter((m) => m.type === 'result').length === 4, from);
      const results = socket.messages.slice(from).filter((m) => m.type === 'result');
      expect(results.map((r) => [r.status, r.body.code ?? r.body.status])).toEqual([
        [200, 'executed'],
        [400, 'INVALID_REQUEST'],
        [422, 'INVALID_FIELD'],
        [200, 'failed'],
      ]);
    } finally {
      socket.close();
      await socket.closed;
    }
  });

  it('hands a signal pushed but not acknowledged out again on the next connection', async () => {
    const id = await postSignal(server.url, authKey, 'EURGBP,sell');
    const first = await RawSocket.open(server.url, agent.token);
    expect((await first.waitForSignals(1)).map((s) => s.id)).toEqual([id]);
    first.close();
    await first.closed;
    const second = await RawSocket.open(server.url, agent.token);
    expect((await second.waitForSignals(1)).map((s) => s.id)).toEqual([id]);
    await second.request({ type: 'ack', id, status: 'executed' });
    expect((await deliveriesOf(server, id))[0]).toMatchObject({ status: 'executed', attempts: 2 });
    second.close();
    await second.closed;
  });
});
