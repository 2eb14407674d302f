import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { accountWithAgents, agentRequest, postSignal, sourceFor, type TestAgent } from './support/delivery-setup.js';

describe('GET /api/agent/signals (long-poll)', () => {
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

  const poll = (query = '') => agentRequest(server.url, agent.token, 'GET', `/api/agent/signals${query}`);
  const ackAll = async (signals: Array<{ id: string }>) => {
    for (const s of signals)
      expect(
        (await agentRequest(server.url, agent.token, 'POST', `/api/agent/signals/${s.id}/ack`, { status: 'executed' }))
          .status,
      ).toBe(200);
  };

  it('answers pending signals oldest first, in the record shape of the agent API', async () => {
    const first = await postSignal(server.url, authKey, 'EURUSD,buy,vol=0.1,sl_pips=20');
    const second = await postSignal(server.url, authKey, 'GBPUSD,sell');
    const res = await poll();
    expect(res.status).toBe(200);
    expect(res.body.signals.map((s: { id: string }) => s.id)).toEqual([first, second]);
    const [a, b] = res.body.signals;
    expect(Object.keys(a).sort()).toEqual(['expiresAt', 'id', 'receivedAt', 'seq', 'signal', 'sourceId']);
    expect(b.seq).toBeGreaterThan(a.seq);
    expect(a.signal).toEqual({
      symbol: 'EURUSD',
      action: 'buy',
      volume: { type: 'lots', value: 0.1 },
      sl: { type: 'pips', value: 20 },
    });
    expect(Date.parse(a.expiresAt) - Date.parse(a.receivedAt)).toBe(120_000);
    await ackAll(res.body.signals);
  });

  it('hands an unacknowledged signal out again on the next poll, and an acknowledged one never again', async () => {
    const id = await postSignal(server.url, authKey, 'USDJPY,buy');
    const once = await poll();
    expect(once.body.signals.map((s: { id: string }) => s.id)).toEqual([id]);
    const again = await poll();
    expect(again.body.signals.map((s: { id: string }) => s.id)).toEqual([id]);
    await ackAll(again.body.signals);
    expect((await poll()).body.signals).toEqual([]);
  });

  it('holds a poll with nothing pending and answers it with the signal posted while it waits', async () => {
    let answered = false;
    const waiting = poll('?wait=20').then((res) => {
      answered = true;
      return res;
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(answered).toBe(false);
    const id = await postSignal(server.url, authKey, 'XAUUSD,buy');
    const res = await waiting;
    expect(res.status).toBe(200);
    expect(res.body.signals.map((s: { id: string }) => s.id)).toEqual([id]);
    await ackAll(res.body.signals);
  });

  it('hands each of many agents polling at the same moment its own queue, in order, and after the acks nothing again', async () => {
    // Two accounts of four agents, each source routed to one agent: the polls of one moment are
    // answered together (on PostgreSQL, one statement for all of them).
    const agents: TestAgent[] = [];
    const keys: string[] = [];
    for (const prefix of ['a', 'b']) {
      const account = await accountWithAgents(
        server,
        [1, 2, 3, 4].map((n) => `${prefix}${n}`),
      );
      for (const each of account.agents) {
        agents.push(each);
        keys.push((await sourceFor(server, account.accountId, { agentIds: [each.id] })).authKey);
      }
    }
    const pollOf = (who: TestAgent, query = '') =>
      agentRequest(server.url, who.token, 'GET', `/api/agent/signals${query}`);
    const waiting = agents.map((who) => pollOf(who, '?wait=20'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const expected = await Promise.all(
      keys.map(async (key, i) => [await postSignal(server.url, key, i % 2 === 0 ? 'EURUSD,buy' : 'GBPUSD,sell')]),
    );
    const first = await Promise.all(waiting);
    first.forEach((res, i) => expect(res.body.signals.map((s: { id: string }) => s.id)).toEqual(expected[i]));
    for (let round = 0; round < 3; round++) {
      for (const [i, key] of keys.entries()) expected[i]!.push(await postSignal(server.url, key, 'USDJPY,buy'));
    }
    const all = await Promise.all(agents.map((who) => pollOf(who)));
    all.forEach((res, i) => expect(res.body.signals.map((s: { id: string }) => s.id)).toEqual(expected[i]));
    await Promise.all(
      agents.map(async (who, i) => {
        for (const id of expected[i]!) {
          expect(
            (await agentRequest(server.url, who.token, 'POST', `/api/agent/signals/${id}/ack`, { status: 'executed' }))
              .status,
          ).toBe(200);
        }
      }),
    );
    const after = await Promise.all(agents.map((who) => pollOf(who)));
    for (const res of after) expect(res.body.signals).toEqual([]);
    for (const who of agents) {
      const record = await server.admin('GET', `/api/admin/agents/${who.id}`);
      expect(record.body.lastSeenAt).not.toBeNull();
    }
  });

  it('answers an empty list when the wait runs out', async () => {
    const res = await poll('?wait=0.2');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ signals: [] });
  });

  it.each(['31', '-1', 'soon', '', '1e3'])('refuses wait=%s with a 400 problem naming the parameter', async (wait) => {
    const res = await poll(`?wait=${wait}`);
    expect(res.status).toBe(400);
    expect(res.contentType).toContain('application/problem+json');
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', param: 'wait' });
  });

  it('refuses a query parameter it does not know, here and on the ack, rather than ignore it', async () => {
    const typo = await poll('?wiat=30');
    expect(typo.status).toBe(400);
    expect(typo.body).toMatchObject({
      code: 'INVALID_REQUEST',
      param: 'wiat',
      detail: "unknown query parameter 'wiat'; the parameters are wait",
    });
    const ack = await agentRequest(server.url, agent.token, 'POST', '/api/agent/signals/sig_x/ack?x=1', {
      status: 'executed',
    });
    expect(ack.status).toBe(400);
    expect(ack.body).toMatchObject({ code: 'INVALID_REQUEST', param: 'x' });
  });
});
