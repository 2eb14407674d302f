import { WebSocket } from 'ws';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithAgents, postSignal, sourceFor } from '../delivery/support/delivery-setup.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { within } from '../support/within.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('lists of accounts, sources and agents', () => {
  it('pages newest first with limit and the next cursor, as the signal log does', async () => {
    const names = ['L1', 'L2', 'L3'];
    for (const name of names) await server.admin('POST', '/api/admin/accounts', { name, monthlySignalQuota: 1 });
    const page1 = await server.admin('GET', '/api/admin/accounts?limit=2');
    expect(page1.status).toBe(200);
    expect(page1.body.accounts.map((a: any) => a.name)).toEqual(['L3', 'L2']);
    expect(page1.body.accounts[0]).toEqual({
      id: expect.any(String),
      name: 'L3',
      monthlySignalQuota: 1,
      createdAt: expect.any(String),
    });
    expect(page1.body.next).toBe(page1.body.accounts[1].id);
    const page2 = await server.admin('GET', `/api/admin/accounts?limit=1&before=${page1.body.next}`);
    expect(page2.body.accounts.map((a: any) => a.name)).toEqual(['L1']);

    const { accountId, agents } = await accountWithAgents(server, ['a1', 'a2']);
    const source = await sourceFor(server, accountId);
    const sources = await server.admin('GET', `/api/admin/sources?accountId=${accountId}`);
    expect(sources.body).toEqual({
      sources: [expect.objectContaining({ id: source.id, authKeyHint: source.authKey.slice(0, 4) })],
      next: null,
    });
    expect(JSON.stringify(sources.body)).not.toContain(source.authKey);
    expect(JSON.stringify(sources.body)).not.toContain('hmacSecret');
    const listed = await server.admin('GET', `/api/admin/agents?accountId=${accountId}&limit=1`);
    expect(listed.body.agents.map((a: any) => a.id)).toEqual([agents[1]!.id]);
    expect(listed.body.agents[0]).not.toHaveProperty('tokenHash');
    expect(listed.body.agents[0]).not.toHaveProperty('token');
    expect(listed.body.next).toBe(agents[1]!.id);
  });

  it('refuses a bad limit, an unknown or repeated parameter, and a cursor or account that names nothing', async () => {
    const bad = await server.admin('GET', '/api/admin/accounts?limit=0&lmit=5');
    expect(bad.status).toBe(400);
    expect(bad.body.errors.map((e: any) => e.param)).toEqual(['lmit', 'limit']);
    expect(bad.body.errors[0].detail).toMatch(/lmit.*limit/);
    expect((await server.admin('GET', '/api/admin/accounts?limit=501')).status).toBe(400);
    expect((await server.admin('GET', '/api/admin/sources?accountId=a&accountId=b')).body).toMatchObject({
      code: 'INVALID_REQUEST',
      param: 'accountId',
    });
    expect((await server.admin('GET', '/api/admin/agents?accountId=')).body).toMatchObject({
      code: 'INVALID_REQUEST',
      param: 'accountId',
    });
    expect((await server.admin('GET', '/api/admin/sources?accountId=acc_missing')).body).toMatchObject({
      code: 'NOT_FOUND',
      param: 'accountId',
    });
    expect((await server.admin('GET', '/api/admin/agents?before=agt_missing')).body).toMatchObject({
      code: 'NOT_FOUND',
      param: 'before',
    });
    expect((await server.admin('GET', '/api/admin/accounts?before=acc_missing')).status).toBe(404);
  });
});

describe('signals per day', () => {
  it("counts the account's signals per UTC day, every one of the last days listed", async () => {
    const { accountId } = await accountWithAgents(server, []);
    const source = await sourceFor(server, accountId);
    await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1');
    await fetch(`${server.url}/api/inbound/${source.authKey}`, { method: 'POST', body: 'EURUSD,buy,vol=0.1,sl_pip=3' });
    const daily = await server.admin('GET', `/api/admin/accounts/${accountId}/usage/daily?days=3`);
    expect(daily.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(daily.body.days).toHaveLength(3);
    expect(daily.body.to).toBe(today);
    expect(daily.body.days[2]).toEqual({ date: today, accepted: 1, rejected: 1 });
    expect(daily.body.days[0]).toEqual({ date: daily.body.from, accepted: 0, rejected: 0 });
    expect((await server.admin('GET', `/api/admin/accounts/${accountId}/usage/daily`)).body.days).toHaveLength(30);
    expect((await server.admin('GET', `/api/admin/accounts/${accountId}/usage/daily?days=367`)).status).toBe(400);
    expect((await server.admin('GET', `/api/admin/accounts/${accountId}/usage/daily?day=3`)).status).toBe(400);
    expect((await server.admin('GET', '/api/admin/accounts/acc_missing/usage/daily')).status).toBe(404);
  });
});

describe('the signal log filtered by symbol', () => {
  it('answers only accepted signals for that symbol, in any case as given', async () => {
    const { accountId } = await accountWithAgents(server, []);
    const source = await sourceFor(server, accountId);
    const gold = await postSignal(server.url, source.authKey, 'XAUUSD,buy,vol=0.1');
    await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1');
    const listed = await server.admin('GET', `/api/admin/signals?sourceId=${source.id}&symbol=xauusd`);
    expect(listed.body.signals.map((s: any) => s.id)).toEqual([gold]);
    const bad = await server.admin('GET', '/api/admin/signals?symbol=EUR%20USD');
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_REQUEST', param: 'symbol' });
  });
});

describe('the signal log filtered by two things at once', () => {
  it('answers nothing, without reading the log, only where no signal can match: a rejected one has no symbol, and only accepted ones have outcomes', async () => {
    const { accountId } = await accountWithAgents(server, ['box']);
    const made = await server.admin('POST', '/api/admin/sources', {
      accountId,
      name: 'Guarded',
      duplicateWindowSeconds: 60,
    });
    const source = { id: made.body.id as string, authKey: made.body.authKey as string };
    const gold = await postSignal(server.url, source.authKey, 'XAUUSD,buy,vol=0.1');
    await postSignal(server.url, source.authKey, 'XAUUSD,buy,vol=0.1'); // answered as the first: a duplicate
    await fetch(`${server.url}/api/inbound/${source.authKey}`, { method: 'POST', body: 'XAUUSD,buyy,vol=0.1' });
    const ids = async (query: string) => {
      const listed = await server.admin('GET', `/api/admin/signals?sourceId=${source.id}&${query}`);
      expect(listed.status).toBe(200);
      return listed.body.signals.map((s: any) => s.id);
    };
    const duplicates = await ids('status=duplicate');
    expect(duplicates).toHaveLength(1);
    expect(duplicates[0]).not.toBe(gold);
    expect(await ids('status=duplicate&symbol=XAUUSD')).toEqual(duplicates);
    expect(await ids('status=accepted&symbol=XAUUSD')).toEqual([gold]);
    expect(await ids('status=accepted&outcome=queued')).toEqual([gold]);
    expect(await ids('status=rejected')).toHaveLength(1);
    expect(await ids('status=rejected&symbol=XAUUSD')).toEqual([]);
    expect(await ids('status=duplicate&outcome=queued')).toEqual([]);
    expect(await ids('status=rejected&outcome=queued')).toEqual([]);
  });
});

describe('deleting a source', () => {
  it('removes it with its log: its key is refused at once and its queued deliveries are never handed out', async () => {
    const { accountId, agents } = await accountWithAgents(server, ['box']);
    const source = await sourceFor(server, accountId);
    const id = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1');
    expect((await server.admin('DELETE', `/api/admin/sources/${source.id}`)).status).toBe(204);
    expect((await server.admin('GET', `/api/admin/sources/${source.id}`)).status).toBe(404);
    expect((await server.admin('GET', `/api/admin/signals/${id}`)).status).toBe(404);
    const refused = await fetch(`${server.url}/api/inbound/${source.authKey}`, {
      method: 'POST',
      body: 'EURUSD,buy,vol=0.1',
    });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as any).code).toBe('INVALID_SOURCE_KEY');
    const poll = await fetch(`${server.url}/api/agent/signals`, {
      headers: { authorization: `Bearer ${agents[0]!.token}` },
    });
    expect(((await poll.json()) as any).signals).toEqual([]);
    expect((await server.admin('DELETE', `/api/admin/sources/${source.id}`)).status).toBe(404);
  });
});

describe('rotating an agent token and deleting an agent', () => {
  it('shows the new token once; the old one is refused at once and its open WebSocket is closed', async () => {
    const { accountId, agents } = await accountWithAgents(server, ['box']);
    const agent = agents[0]!;
    const ws = await connect(agent.token);
    const rotated = await server.admin('POST', `/api/admin/agents/${agent.id}/rotate-token`);
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: agent.id, accountId, token: expect.stringMatching(/^sga_/) });
    expect(rotated.body.token).not.toBe(agent.token);
    expect(await ws.closed).toEqual({ code: 4401, reason: expect.stringContaining('rotated') });
    expect((await poll(agent.token)).status).toBe(401);
    expect((await poll(rotated.body.token)).status).toBe(200);
    // The agent record shows no token, ever.
    expect((await server.admin('GET', `/api/admin/agents/${agent.id}`)).body).not.toHaveProperty('token');
    expect(
      (await server.admin('POST', `/api/admin/agents/${agent.id}/rotate-token`, { token: 'mine' })).body,
    ).toMatchObject({
      code: 'INVALID_FIELD',
      param: 'token',
    });
    expect((await server.admin('POST', '/api/admin/agents/agt_missing/rotate-token')).status).toBe(404);
  });

  it('deletes an agent: token refused, connection closed, its queued deliveries gone; refused while a source routes to it', async () => {
    const { accountId, agents } = await accountWithAgents(server, ['routed', 'spare']);
    const [routed, spare] = agents as [(typeof agents)[0], (typeof agents)[0]];
    const source = await sourceFor(server, accountId, { agentIds: [routed.id] });
    const refused = await server.admin('DELETE', `/api/admin/agents/${routed.id}`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'AGENT_ROUTED', param: 'id' });
    expect(refused.body.detail).toContain(source.id);

    const everyAgent = await sourceFor(server, accountId);
    const signal = await postSignal(server.url, everyAgent.authKey, 'EURUSD,buy,vol=0.1');
    const ws = await connect(spare.token);
    expect((await server.admin('DELETE', `/api/admin/agents/${spare.id}`)).status).toBe(204);
    expect((await ws.closed).code).toBe(4401);
    expect((await poll(spare.token)).status).toBe(401);
    expect((await server.admin('GET', `/api/admin/agents/${spare.id}`)).status).toBe(404);
    const logged = await server.admin('GET', `/api/admin/signals/${signal}`);
    expect(logged.body.deliveries.map((d: any) => d.agentId)).toEqual([routed.id]);
    expect((await server.admin('DELETE', `/api/admin/agents/${spare.id}`)).status).toBe(404);
  });
});

function poll(token: string) {
  return fetch(`${server.url}/api/agent/signals`, { headers: { authorization: `Bearer ${token}` } });
}

/** An agent's WebSocket, open once the server said hello; `closed` is how the server ended it. */
async function connect(token: string): Promise<{ closed: Promise<{ code: number; reason: string }> }> {
  const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/agent/ws`, {
    headers: { authorization: `Bearer ${token}` },
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })),
  );
  await new Promise<void>((resolve, reject) => {
    ws.once('message', () => resolve());
    ws.once('error', reject);
  });
  // A guard against a hang (counted from the connect, not from what should close it): generous.
  const bounded = within(closed, 'the server to close the connection');
  bounded.catch(() => undefined);
  return { closed: bounded };
}
