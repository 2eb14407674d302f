import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, seedSource } from '../support/seed-source.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { TEST_ADMIN_TOKEN } from '../support/start-test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('admin authentication', () => {
  it('refuses a missing or wrong bearer token with 401 problem+json', async () => {
    const none = await fetch(`${server.url}/api/admin/accounts`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await none.json()) as any).code).toBe('UNAUTHORIZED');
    const wrong = await fetch(`${server.url}/api/admin/signals`, {
      headers: { authorization: 'Bearer not-the-token' },
    });
    expect(wrong.status).toBe(401);
  });
});

describe('accounts', () => {
  it('creates an account and reports its usage for the current period', async () => {
    const created = await server.admin('POST', '/api/admin/accounts', { name: 'Desk A', monthlySignalQuota: 500 });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: 'Desk A',
      monthlySignalQuota: 500,
      createdAt: expect.any(String),
    });
    const usage = await server.admin('GET', `/api/admin/accounts/${created.body.id}/usage`);
    const now = new Date();
    const period = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}`;
    const resetsAt = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
    expect(usage.body).toEqual({ period, used: 0, limit: 500, resetsAt });
  });

  it('refuses bad input with every problem and creates nothing', async () => {
    const res = await server.admin('POST', '/api/admin/accounts', { name: '', monthlySignalQuota: -1, plan: 'gold' });
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { param: string }) => e.param)).toEqual(['name', 'monthlySignalQuota', 'plan']);
    const malformed = await fetch(`${server.url}/api/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: '{"name":',
    });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as any).code).toBe('INVALID_REQUEST');
    expect((await server.admin('GET', '/api/admin/accounts/acc_missing/usage')).status).toBe(404);
    const control = await server.admin('POST', '/api/admin/accounts', { name: 'Desk\u0000A', monthlySignalQuota: 1 });
    expect(control.status).toBe(422);
    expect(control.body).toMatchObject({ code: 'INVALID_FIELD', param: 'name' });
  });
});

describe('sources', () => {
  it('creates a source whose answer carries the key and inbound URL (once: the detail view has only its hint), never the secret', async () => {
    const account = await server.admin('POST', '/api/admin/accounts', { name: 'Desk B', monthlySignalQuota: 10 });
    const created = await server.admin('POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'Webhook',
      hmacSecret: 'very-secret-value',
    });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      accountId: account.body.id,
      name: 'Webhook',
      authKeyHint: created.body.authKey.slice(0, 4),
      authKey: expect.stringMatching(/^[A-Za-z0-9_-]{22,}$/),
      inboundUrl: `http://signals.example.test/api/inbound/${created.body.authKey}`,
      active: true,
      hmac: true,
      agentIds: [],
      maxSignalAgeSeconds: 120,
      duplicateWindowSeconds: 0,
      allowedIps: [],
      createdAt: expect.any(String),
    });
    expect(JSON.stringify(created.body)).not.toContain('very-secret-value');
    const shown = await server.admin('GET', `/api/admin/sources/${created.body.id}`);
    const { authKey: _key, inboundUrl: _url, ...later } = created.body;
    expect(shown.body).toEqual(later);
  });

  it('patches name, activity, secret (set and clear), routing and max age', async () => {
    const src = await seedSource(server);
    const agent = await server.admin('POST', `/api/admin/accounts/${src.accountId}/agents`, { name: 'MT5 box' });
    expect(agent.status).toBe(201);
    expect(agent.body).toMatchObject({ id: expect.any(String), name: 'MT5 box', token: expect.any(String) });
    const patched = await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, {
      name: 'Renamed',
      active: false,
      hmacSecret: 'abc-secret-123',
      agentIds: [agent.body.id],
      maxSignalAgeSeconds: 30,
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({
      name: 'Renamed',
      active: false,
      hmac: true,
      agentIds: [agent.body.id],
      maxSignalAgeSeconds: 30,
    });
    const cleared = await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, {
      hmacSecret: null,
      active: true,
    });
    expect(cleared.body).toMatchObject({ hmac: false, active: true });
    expect((await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' })).status).toBe(202);
  });

  it('refuses agents of another account, unknown fields and bad values, changing nothing', async () => {
    const src = await seedSource(server);
    const stranger = await seedSource(server);
    const foreign = await server.admin('POST', `/api/admin/accounts/${stranger.accountId}/agents`, { name: 'Other' });
    const res = await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, { agentIds: [foreign.body.id] });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: 'INVALID_FIELD', param: 'agentIds' });
    const typo = await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, { actve: false });
    expect(typo.status).toBe(422);
    expect(typo.body).toMatchObject({ code: 'INVALID_FIELD', param: 'actve' });
    const age = await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, { maxSignalAgeSeconds: 0 });
    expect(age.status).toBe(422);
    const nothing = await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, {});
    expect(nothing.status).toBe(400);
    expect(nothing.body).toMatchObject({ code: 'INVALID_REQUEST', detail: expect.stringContaining('changes nothing') });
    const shown = await server.admin('GET', `/api/admin/sources/${src.sourceId}`);
    expect(shown.body).toMatchObject({ active: true, agentIds: [], maxSignalAgeSeconds: 120 });
    expect((await server.admin('PATCH', '/api/admin/sources/src_missing', { active: false })).status).toBe(404);
    expect((await server.admin('GET', '/api/admin/sources/src_missing')).status).toBe(404);
    const noAccount = await server.admin('POST', '/api/admin/sources', { accountId: 'acc_missing', name: 'x' });
    expect(noAccount.status).toBe(422);
  });

  it('refuses a secret that could never match as the X-Signalgate-Secret header, and keeps the old one', async () => {
    const src = await seedSource(server, { hmacSecret: 'kept-secret' });
    for (const hmacSecret of ['sécret', ' spaced ', 'tab\there']) {
      const patched = await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, { hmacSecret });
      expect({ hmacSecret, status: patched.status, param: patched.body.param }).toEqual({
        hmacSecret,
        status: 422,
        param: 'hmacSecret',
      });
      const created = await server.admin('POST', '/api/admin/sources', {
        accountId: src.accountId,
        name: 'x',
        hmacSecret,
      });
      expect(created.status).toBe(422);
    }
    const signed = await post(server.url + src.inboundPath, 'EURUSD,buy', {
      'content-type': 'text/plain',
      'x-signalgate-secret': 'kept-secret',
    });
    expect(signed.status).toBe(202);
    const inner = await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, { hmacSecret: 'with inner space' });
    expect(inner.status).toBe(200);
  });

  it('rotating the key stops the old one at once', async () => {
    const src = await seedSource(server);
    const rotated = await server.admin('POST', `/api/admin/sources/${src.sourceId}/rotate-key`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.authKey).not.toBe(src.authKey);
    const old = await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    expect(old.status).toBe(401);
    expect(old.body.code).toBe('INVALID_SOURCE_KEY');
    const fresh = await post(`${server.url}/api/inbound/${rotated.body.authKey}`, 'EURUSD,buy', {
      'content-type': 'text/plain',
    });
    expect(fresh.status).toBe(202);
  });
});

describe('signals and agents', () => {
  it('shows one signal with its deliveries, and 404 for an unknown one', async () => {
    const src = await seedSource(server);
    const agent = await server.admin('POST', `/api/admin/accounts/${src.accountId}/agents`, { name: 'paper' });
    const res = await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    const record = await server.admin('GET', `/api/admin/signals/${res.body.id}`);
    expect(record.body.deliveries).toEqual([
      expect.objectContaining({ agentId: agent.body.id, status: 'queued', seq: 1 }),
    ]);
    expect((await server.admin('GET', '/api/admin/signals/sig_missing')).status).toBe(404);
    const shownAgent = await server.admin('GET', `/api/admin/agents/${agent.body.id}`);
    expect(shownAgent.body).toMatchObject({
      id: agent.body.id,
      name: 'paper',
      accountId: src.accountId,
      lastSeenAt: null,
      state: null,
    });
    expect(JSON.stringify(shownAgent.body)).not.toContain(agent.body.token);
  });

  it('answers unknown routes with a 404 problem and GET /healthz with ok', async () => {
    const missing = await fetch(`${server.url}/api/nothing`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as any).code).toBe('NOT_FOUND');
    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ status: 'ok' });
  });
});

describe('the signal log query', () => {
  it('refuses a repeated query parameter with 400 naming it, whichever it is', async () => {
    const src = await seedSource(server);
    const first = await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    for (const query of [
      `sourceId=${src.sourceId}&sourceId=${src.sourceId}`,
      `before=${first.body.id}&before=${first.body.id}`,
      'status=queued&status=rejected',
      'limit=1&limit=2',
    ]) {
      const res = await server.admin('GET', `/api/admin/signals?${query}`);
      const param = query.split('=')[0];
      expect(res.status, query).toBe(400);
      expect(res.body, query).toMatchObject({ code: 'INVALID_REQUEST', param });
      expect(res.body.detail, query).toContain(`'${param}'`);
    }
  });

  it('refuses an unknown query parameter, naming it and the ones that exist', async () => {
    const src = await seedSource(server);
    await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    const res = await server.admin('GET', `/api/admin/signals?accountId=${src.accountId}`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', param: 'accountId' });
    for (const name of ['accountId', 'sourceId', 'status', 'limit', 'before']) expect(res.body.detail).toContain(name);
  });

  it('answers 404 for a sourceId or before naming nothing, and pages with a real cursor', async () => {
    const src = await seedSource(server);
    const first = await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    const second = await post(server.url + src.inboundPath, 'EURUSD,sell', { 'content-type': 'text/plain' });
    const noSource = await server.admin('GET', '/api/admin/signals?sourceId=src_nope');
    expect(noSource.status).toBe(404);
    expect(noSource.body).toMatchObject({ code: 'NOT_FOUND', param: 'sourceId' });
    expect(noSource.body.detail).toContain('src_nope');
    for (const before of ['sig_nope', 'garbage']) {
      const res = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}&before=${before}`);
      expect(res.status, before).toBe(404);
      expect(res.body, before).toMatchObject({ code: 'NOT_FOUND', param: 'before' });
      expect(res.body.detail, before).toContain('next');
    }
    for (const empty of ['sourceId=', 'before=']) {
      const res = await server.admin('GET', `/api/admin/signals?${empty}`);
      expect(res.status, empty).toBe(400);
      expect(res.body, empty).toMatchObject({ code: 'INVALID_REQUEST', param: empty.slice(0, -1) });
    }
    const page1 = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}&limit=1`);
    expect(page1.body).toMatchObject({ signals: [{ id: second.body.id }], next: second.body.id });
    const page2 = await server.admin(
      'GET',
      `/api/admin/signals?sourceId=${src.sourceId}&limit=1&before=${page1.body.next}`,
    );
    expect(page2.status).toBe(200);
    expect(page2.body.signals.map((s: { id: string }) => s.id)).toEqual([first.body.id]);
  });
});

describe('rotate-key bodies', () => {
  const token = `Bearer ${TEST_ADMIN_TOKEN}`;
  const rotate = (sourceId: string, headers: Record<string, string>, body?: string) =>
    fetch(`${server.url}/api/admin/sources/${sourceId}/rotate-key`, {
      method: 'POST',
      headers: { authorization: token, ...headers },
      ...(body !== undefined && { body }),
    });

  it('takes an empty body, with or without a JSON content type, and an empty object', async () => {
    const src = await seedSource(server);
    const keys = new Set([src.authKey]);
    for (const [headers, body] of [
      [{ 'content-type': 'application/json' }, undefined],
      [{ 'content-type': 'application/json' }, ''],
      [{ 'content-type': 'application/json; charset=utf-8' }, ''],
      [{}, undefined],
      [{ 'content-type': 'application/json' }, '{}'],
    ] as Array<[Record<string, string>, string | undefined]>) {
      const res = await rotate(src.sourceId, headers, body);
      const answer = (await res.json()) as { authKey: string };
      expect(res.status, JSON.stringify([headers, body, answer])).toBe(200);
      expect(keys.has(answer.authKey)).toBe(false);
      keys.add(answer.authKey);
    }
  });

  it('refuses a body with any field, naming it, and keeps the key', async () => {
    const src = await seedSource(server);
    const res = await rotate(src.sourceId, { 'content-type': 'application/json' }, '{"x":1,"authKey":"mine"}');
    expect(res.status).toBe(422);
    const problem = (await res.json()) as any;
    expect(problem).toMatchObject({ code: 'INVALID_FIELD', param: 'x' });
    expect(problem.errors.map((e: { param: string }) => e.param)).toEqual(['x', 'authKey']);
    const notObject = await rotate(src.sourceId, { 'content-type': 'application/json' }, '[]');
    expect(notObject.status).toBe(400);
    const malformed = await rotate(src.sourceId, { 'content-type': 'application/json' }, '{"x":');
    expect(malformed.status).toBe(400);
    const shown = await server.admin('GET', `/api/admin/sources/${src.sourceId}`);
    expect(shown.body.authKeyHint).toBe(src.authKey.slice(0, 4));
    expect((await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' })).status).toBe(202);
  });

  it('leaves other routes as they were: an empty JSON body is still refused there', async () => {
    const res = await fetch(`${server.url}/api/admin/accounts`, {
      method: 'POST',
      headers: { authorization: token, 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
  });
});

describe('account detail and update', () => {
  it('shows an account and patches its name and quota', async () => {
    const created = await server.admin('POST', '/api/admin/accounts', { name: 'Desk C', monthlySignalQuota: 5 });
    const shown = await server.admin('GET', `/api/admin/accounts/${created.body.id}`);
    expect(shown.status).toBe(200);
    expect(shown.body).toEqual(created.body);
    const renamed = await server.admin('PATCH', `/api/admin/accounts/${created.body.id}`, { name: '  Desk D ' });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toEqual({ ...created.body, name: 'Desk D' });
    const raised = await server.admin('PATCH', `/api/admin/accounts/${created.body.id}`, {
      monthlySignalQuota: 1_000_000_000,
    });
    expect(raised.body).toEqual({ ...created.body, name: 'Desk D', monthlySignalQuota: 1_000_000_000 });
    expect((await server.admin('GET', `/api/admin/accounts/${created.body.id}`)).body).toEqual(raised.body);
    expect((await server.admin('GET', `/api/admin/accounts/${created.body.id}/usage`)).body.limit).toBe(1_000_000_000);
  });

  it('refuses bad patches with every problem, an empty patch, and unknown accounts, changing nothing', async () => {
    const created = await server.admin('POST', '/api/admin/accounts', { name: 'Desk E', monthlySignalQuota: 5 });
    const bad = await server.admin('PATCH', `/api/admin/accounts/${created.body.id}`, {
      name: '',
      monthlySignalQuota: 1_000_000_001,
      plan: 'gold',
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { param: string }) => e.param)).toEqual(['name', 'monthlySignalQuota', 'plan']);
    const negative = await server.admin('PATCH', `/api/admin/accounts/${created.body.id}`, { monthlySignalQuota: -1 });
    expect(negative.status).toBe(422);
    const empty = await server.admin('PATCH', `/api/admin/accounts/${created.body.id}`, {});
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe('INVALID_REQUEST');
    expect(empty.body.detail).toContain('monthlySignalQuota');
    expect((await server.admin('GET', `/api/admin/accounts/${created.body.id}`)).body).toEqual(created.body);
    const missing = await server.admin('PATCH', '/api/admin/accounts/acc_missing', { monthlySignalQuota: 3 });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('NOT_FOUND');
    expect((await server.admin('GET', '/api/admin/accounts/acc_missing')).status).toBe(404);
  });

  it('a raised quota applies at once to the current month', async () => {
    const src = await seedSource(server, { quota: 1 });
    const send = () => post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    expect((await send()).status).toBe(202);
    const refused = await send();
    expect(refused.status).toBe(429);
    expect(refused.body.code).toBe('QUOTA_SIGNALS_IN');
    const raised = await server.admin('PATCH', `/api/admin/accounts/${src.accountId}`, { monthlySignalQuota: 2 });
    expect(raised.status).toBe(200);
    const accepted = await send();
    expect(accepted.status).toBe(202);
    expect(accepted.body.quota).toMatchObject({ used: 2, limit: 2 });
    expect((await send()).status).toBe(429);
    const lowered = await server.admin('PATCH', `/api/admin/accounts/${src.accountId}`, { monthlySignalQuota: 0 });
    expect(lowered.status).toBe(200);
    expect((await server.admin('GET', `/api/admin/accounts/${src.accountId}/usage`)).body).toMatchObject({
      used: 2,
      limit: 0,
    });
  });
});
