import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/start-test-server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server?.stop());

/** Every kind of answer: the inbound path (answered outside the router), the API, health, errors, the dashboard. */
const REQUESTS: Array<[string, string, RequestInit?]> = [
  ['inbound, wrong key', '/api/inbound/no-such-key-0123456789', { method: 'POST', body: 'EURUSD,buy' }],
  ['inbound, other method', '/api/inbound/no-such-key-0123456789'],
  ['health', '/healthz'],
  ['readiness', '/readyz'],
  ['metrics, no token', '/metrics'],
  ['admin API, no token', '/api/admin/accounts'],
  [
    'admin API, signed in by token',
    '/api/admin/accounts',
    { headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` } },
  ],
  ['API description', '/api/openapi.json'],
  ['agent API, no token', '/api/agent/signals'],
  ['no such route', '/no-such-route'],
  ['dashboard page', '/'],
];

describe('security headers', () => {
  it.each(REQUESTS)(
    '%s: nosniff, no framing, no referrer, same-origin resources; no HSTS over plain HTTP',
    async (_name, urlPath, init) => {
      const res = await fetch(server.url + urlPath, init);
      await res.arrayBuffer();
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('cross-origin-resource-policy')).toBe('same-origin');
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(res.headers.get('strict-transport-security')).toBeNull();
    },
  );

  it("keeps the dashboard's own Content-Security-Policy on its page, and a strict one elsewhere", async () => {
    const page = await fetch(`${server.url}/`);
    expect(page.headers.get('content-security-policy')).toContain("script-src 'self'");
    const api = await fetch(`${server.url}/healthz`);
    expect(api.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
  });
});
