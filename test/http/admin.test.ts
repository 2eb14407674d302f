import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, seedSource } from '../support/seed-source.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('admin authentication', () => {
  it('refuses a missing or wrong bearer token with 401 problem+json', async () => {
    const none = await fetch(`${server.url}/api/admin/accounts`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(none.status).toBe(401);
    expect(none.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(((await none.json()) as any).code).toBe('UNAUTHORIZED');
    const wrong = await fetch(`${server.url}/api/admin/signals`, { headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
  });
});

describe('accounts', () => {
  it('creates an account and reports its usage for the current period', async () => {
    const created = await server.admin('POST', '/api/admin/accounts', { name: 'Desk A', monthlySignalQuota: 500 });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({ id: expect.any(String), name: 'Desk A', monthlySignalQuota: 500, createdAt: expect.any(String) });
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
      headers: { authorization: 'Bearer test-admin-token-0123456789', 'content-type': 'application/json' },
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
  it('creates a source whose detail view carries the key and inbound URL but never the secret', async () => {
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
      authKey: expect.stringMatching(/^[A-Za-z0-9_-]{22,}$/),
      inboundUrl: `http://signals.example.test/api/inbound/${created.body.authKey}`,
      active: true,
      hmac: true,
      agentIds: [],
      maxSignalAgeSeconds: 120,
      createdAt: expect.any(String),
    });
    expect(JSON.stringify(created.body)).not.toContain('very-secret-value');
    const shown = await server.admin('GET', `/api/admin/sources/${created.body.id}`);
    expect(shown.body).toEqual(created.body);
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
    expect(patched.body).toMatchObject({ name: 'Renamed', active: false, hmac: true, agentIds: [agent.body.id], maxSignalAgeSeconds: 30 });
    const cleared = await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, { hmacSecret: null, active: true });
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
    const shown = await server.admin('GET', `/api/admin/sources/${src.sourceId}`);
    expect(shown.body).toMatchObject({ active: true, agentIds: [], maxSignalAgeSeconds: 120 });
    expect((await server.admin('PATCH', '/api/admin/sources/src_missing', { active: false })).status).toBe(404);
    expect((await server.admin('GET', '/api/admin/sources/src_missing')).status).toBe(404);
    const noAccount = await server.admin('POST', '/api/admin/sources', { accountId: 'acc_missing', name: 'x' });
    expect(noAccount.status).toBe(422);
  });

  it('rotating the key stops the old one at once', async () => {
    const src = await seedSource(server);
    const rotated = await server.admin('POST', `/api/admin/sources/${src.sourceId}/rotate-key`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.authKey).not.toBe(src.authKey);
    const old = await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    expect(old.status).toBe(401);
    expect(old.body.code).toBe('INVALID_SOURCE_KEY');
    const fresh = await post(`${server.url}/api/inbound/${rotated.body.authKey}`, 'EURUSD,buy', { 'content-type': 'text/plain' });
    expect(fresh.status).toBe(202);
  });
});

describe('signals and agents', () => {
  it('shows one signal with its deliveries, and 404 for an unknown one', async () => {
    const src = await seedSource(server);
    const agent = await server.admin('POST', `/api/admin/accounts/${src.accountId}/agents`, { name: 'paper' });
    const res = await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    const record = await server.admin('GET', `/api/admin/signals/${res.body.id}`);
    expect(record.body.deliveries).toEqual([expect.objectContaining({ agentId: agent.body.id, status: 'queued', seq: 1 })]);
    expect((await server.admin('GET', '/api/admin/signals/sig_missing')).status).toBe(404);
    const shownAgent = await server.admin('GET', `/api/admin/agents/${agent.body.id}`);
    expect(shownAgent.body).toMatchObject({ id: agent.body.id, name: 'paper', accountId: src.accountId, lastSeenAt: null, state: null });
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
