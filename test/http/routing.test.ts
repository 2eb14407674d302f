import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedSource } from '../support/seed-source.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/start-test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

describe('routing', () => {
  it('every method but POST on the inbound path is 405 with Allow: POST', async () => {
    const src = await seedSource(server);
    for (const method of ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']) {
      const res = await fetch(server.url + src.inboundPath, { method });
      expect({ method, status: res.status, allow: res.headers.get('allow') }).toEqual({ method, status: 405, allow: 'POST' });
    }
  });

  it('an id longer than any record has is 404 NOT_FOUND, not a complaint about the encoding', async () => {
    const res = await fetch(`${server.url}/api/admin/sources/${'a'.repeat(101)}`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({ code: 'NOT_FOUND', detail: expect.stringContaining('at most 100 characters') });
  });

  it('a path that is not valid percent-encoding is 400 INVALID_REQUEST', async () => {
    const res = await fetch(`${server.url}/api/admin/sources/%E0%A4%A`, { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ code: 'INVALID_REQUEST', detail: expect.stringContaining('percent-encoding') });
  });

  it('a JSON body that gives a field twice is 400 naming it, and changes nothing', async () => {
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const created = await fetch(`${server.url}/api/admin/accounts`, {
      method: 'POST',
      headers,
      body: '{"name":"Desk","monthlySignalQuota":10,"monthlySignalQuota":1000}',
    });
    expect(created.status).toBe(400);
    expect(await created.json()).toMatchObject({ code: 'INVALID_REQUEST', detail: expect.stringContaining("'monthlySignalQuota' is given more than once") });
    const src = await seedSource(server, { quota: 5 });
    const patched = await fetch(`${server.url}/api/admin/accounts/${src.accountId}`, { method: 'PATCH', headers, body: '{"monthlySignalQuota":7,"monthlySignalQuota":9}' });
    expect(patched.status).toBe(400);
    expect((await server.admin('GET', `/api/admin/accounts/${src.accountId}`)).body.monthlySignalQuota).toBe(5);
    const once = await fetch(`${server.url}/api/admin/accounts`, { method: 'POST', headers, body: JSON.stringify({ name: 'Desk', monthlySignalQuota: 10 }) });
    expect(once.status).toBe(201);
  });
});
