import { request } from 'node:http';
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
      expect({ method, status: res.status, allow: res.headers.get('allow') }).toEqual({
        method,
        status: 405,
        allow: 'POST',
      });
    }
  });

  it('a request on the inbound path with an Upgrade header gets what the path answers without one, never a 404', async () => {
    const src = await seedSource(server);
    const upgrade = {
      connection: 'Upgrade',
      upgrade: 'websocket',
      'sec-websocket-version': '13',
      'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
    };
    const get = await rawRequest(server.url + src.inboundPath, 'GET', upgrade);
    expect({ status: get.status, allow: get.headers.allow, code: JSON.parse(get.body).code }).toEqual({
      status: 405,
      allow: 'POST',
      code: 'METHOD_NOT_ALLOWED',
    });

    // What `curl --http2` sends on an http:// URL: this server does not switch, and says so.
    const h2c = await rawRequest(
      server.url + src.inboundPath,
      'POST',
      {
        connection: 'Upgrade, HTTP2-Settings',
        upgrade: 'h2c',
        'http2-settings': 'AAMAAABkAARAAAAAAAIAAAAA',
        'content-type': 'text/plain',
      },
      'EURUSD,buy',
    );
    expect(h2c.status).toBe(400);
    expect(JSON.parse(h2c.body)).toMatchObject({
      code: 'INVALID_REQUEST',
      param: 'Upgrade',
      detail: expect.stringContaining('without an Upgrade header'),
    });
    expect(h2c.body).not.toContain(src.authKey);
    const log = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}`);
    expect(log.body.signals).toEqual([]);
  });

  it('a form body on a JSON endpoint (what curl -d sends) is 415 saying to send JSON', async () => {
    const res = await fetch(`${server.url}/api/admin/accounts`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Desk&monthlySignalQuota=10',
    });
    expect(res.status).toBe(415);
    expect(await res.json()).toMatchObject({
      code: 'UNSUPPORTED_MEDIA_TYPE',
      param: 'Content-Type',
      detail: 'send the body as JSON with Content-Type: application/json (got application/x-www-form-urlencoded)',
    });
  });

  it('an id longer than any record has is 404 NOT_FOUND, not a complaint about the encoding', async () => {
    const res = await fetch(`${server.url}/api/admin/sources/${'a'.repeat(101)}`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(404);
    expect(await res.json()).toMatchObject({
      code: 'NOT_FOUND',
      detail: expect.stringContaining('at most 100 characters'),
    });
  });

  it('a path that is not valid percent-encoding is 400 INVALID_REQUEST', async () => {
    const res = await fetch(`${server.url}/api/admin/sources/%E0%A4%A`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({
      code: 'INVALID_REQUEST',
      detail: expect.stringContaining('percent-encoding'),
    });
  });

  it('a JSON body that gives a field twice is 400 naming it, and changes nothing', async () => {
    const headers = { authorization: `Bearer ${TEST_ADMIN_TOKEN}`, 'content-type': 'application/json' };
    const created = await fetch(`${server.url}/api/admin/accounts`, {
      method: 'POST',
      headers,
      body: '{"name":"Desk","monthlySignalQuota":10,"monthlySignalQuota":1000}',
    });
    expect(created.status).toBe(400);
    expect(await created.json()).toMatchObject({
      code: 'INVALID_REQUEST',
      detail: expect.stringContaining("'monthlySignalQuota' is given more than once"),
    });
    const src = await seedSource(server, { quota: 5 });
    const patched = await fetch(`${server.url}/api/admin/accounts/${src.accountId}`, {
      method: 'PATCH',
      headers,
      body: '{"monthlySignalQuota":7,"monthlySignalQuota":9}',
    });
    expect(patched.status).toBe(400);
    expect((await server.admin('GET', `/api/admin/accounts/${src.accountId}`)).body.monthlySignalQuota).toBe(5);
    const once = await fetch(`${server.url}/api/admin/accounts`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ name: 'Desk', monthlySignalQuota: 10 }),
    });
    expect(once.status).toBe(201);
  });
});

/** One request through node:http's client, which (unlike fetch) sends Connection and Upgrade as given. */
function rawRequest(
  url: string,
  method: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: text }));
    });
    req.on('upgrade', () => reject(new Error('the server switched protocols')));
    req.on('error', reject);
    req.end(body);
  });
}
