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
});
