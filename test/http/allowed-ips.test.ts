import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TRADINGVIEW_ADDRESSES } from '../../src/security/allowed-ips.js';
import { post, seedSource } from '../support/seed-source.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

/**
 * Source allowlists through the server, on each store. The test client is on loopback, so
 * other addresses are simulated the way a reverse proxy reports them: the server trusts
 * 127.0.0.1 as a proxy and takes the client's address from X-Forwarded-For.
 */
describe('per-source allowedIps', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ config: { trustProxy: ['127.0.0.1'] } });
  });
  afterAll(() => server.stop());

  const from = (address: string) => ({ 'content-type': 'text/plain', 'x-forwarded-for': address });

  async function sourceWith(allowedIps: string[] | undefined) {
    const seeded = await seedSource(server);
    if (allowedIps !== undefined) {
      const patched = await server.admin('PATCH', `/api/admin/sources/${seeded.sourceId}`, { allowedIps });
      expect(patched.status).toBe(200);
    }
    return seeded;
  }

  it('are shown by create, show and patch; a new source allows any address', async () => {
    const { accountId, sourceId } = await seedSource(server);
    expect((await server.admin('GET', `/api/admin/sources/${sourceId}`)).body.allowedIps).toEqual([]);
    const created = await server.admin('POST', '/api/admin/sources', {
      accountId,
      name: 'TV',
      allowedIps: ['tradingview', '203.0.113.0/24', '2001:db8::/32'],
    });
    expect(created.status).toBe(201);
    expect(created.body.allowedIps).toEqual(['tradingview', '203.0.113.0/24', '2001:db8::/32']);
    expect((await server.admin('GET', `/api/admin/sources/${created.body.id}`)).body.allowedIps).toEqual([
      'tradingview',
      '203.0.113.0/24',
      '2001:db8::/32',
    ]);
    const cleared = await server.admin('PATCH', `/api/admin/sources/${created.body.id}`, { allowedIps: [] });
    expect(cleared.body.allowedIps).toEqual([]);
  });

  it('refuse a bad entry with 422 naming it, and change nothing', async () => {
    const { accountId, sourceId } = await sourceWith(['203.0.113.7']);
    const bad = await server.admin('PATCH', `/api/admin/sources/${sourceId}`, {
      allowedIps: ['10.0.0.1/8', 'tradingvew', '203.0.113.7'],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([
      expect.objectContaining({
        code: 'INVALID_FIELD',
        param: 'allowedIps',
        detail: expect.stringContaining("'10.0.0.1/8' has bits set past its /8 prefix; write the network (10.0.0.0/8)"),
      }),
      expect.objectContaining({
        code: 'INVALID_FIELD',
        param: 'allowedIps',
        detail: expect.stringContaining("'tradingvew' is not an IPv4 or IPv6 address or CIDR range"),
      }),
    ]);
    expect((await server.admin('GET', `/api/admin/sources/${sourceId}`)).body.allowedIps).toEqual(['203.0.113.7']);
    for (const allowedIps of ['203.0.113.7', [7], ['10.0.0.0/33'], ['203.0.113.7', '203.0.113.7']]) {
      const refused = await server.admin('POST', '/api/admin/sources', { accountId, name: 'x', allowedIps });
      expect(refused.status, JSON.stringify(allowedIps)).toBe(422);
      expect(refused.body).toMatchObject({ code: 'INVALID_FIELD', param: 'allowedIps' });
    }
  });

  it('take requests from listed addresses, ranges and TradingView’s; from elsewhere 403 IP_NOT_ALLOWED, logged and not charged', async () => {
    const { accountId, sourceId, inboundPath } = await sourceWith(['tradingview', '203.0.113.0/24', '2001:db8::/32']);
    const url = `${server.url}${inboundPath}`;
    for (const address of [...TRADINGVIEW_ADDRESSES, '203.0.113.200', '2001:db8::5']) {
      expect((await post(url, 'EURUSD,buy', from(address))).status, address).toBe(202);
    }
    const refused = await post(url, 'EURUSD,buy', from('198.51.100.1'));
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: 'IP_NOT_ALLOWED', detail: expect.stringContaining('198.51.100.1') });
    // The client's own X-Forwarded-For entry, left of what the proxy appended, does not help.
    expect((await post(url, 'EURUSD,buy', from('203.0.113.9, 198.51.100.1'))).status).toBe(403);

    const usage = await server.admin('GET', `/api/admin/accounts/${accountId}/usage`);
    expect(usage.body.used).toBe(TRADINGVIEW_ADDRESSES.length + 2);
    const log = await server.admin('GET', `/api/admin/signals?sourceId=${sourceId}&status=rejected`);
    expect(log.body.signals).toHaveLength(2);
    expect(log.body.signals[0]).toMatchObject({
      httpStatus: 403,
      code: 'IP_NOT_ALLOWED',
      rawBody: 'EURUSD,buy',
      status: 'rejected',
    });
  });

  it('are checked right after the key: before the source being inactive or the signature', async () => {
    const { sourceId, inboundPath } = await sourceWith(['203.0.113.0/24']);
    await server.admin('PATCH', `/api/admin/sources/${sourceId}`, { active: false, hmacSecret: 'the-secret' });
    const url = `${server.url}${inboundPath}`;
    expect((await post(url, 'EURUSD,buy', from('198.51.100.1'))).body.code).toBe('IP_NOT_ALLOWED');
    expect((await post(url, 'EURUSD,buy', from('203.0.113.1'))).body.code).toBe('SOURCE_INACTIVE');
    expect((await post(`${server.url}/api/inbound/no-such-key`, 'EURUSD,buy', from('198.51.100.1'))).body.code).toBe(
      'INVALID_SOURCE_KEY',
    );
  });

  it('hold at once after a change, and an empty list allows any address again', async () => {
    const { sourceId, inboundPath } = await sourceWith(undefined);
    const url = `${server.url}${inboundPath}`;
    expect((await post(url, 'EURUSD,buy', from('198.51.100.1'))).status).toBe(202);
    await server.admin('PATCH', `/api/admin/sources/${sourceId}`, { allowedIps: ['203.0.113.0/24'] });
    expect((await post(url, 'EURUSD,buy', from('198.51.100.1'))).status).toBe(403);
    await server.admin('PATCH', `/api/admin/sources/${sourceId}`, { allowedIps: [] });
    expect((await post(url, 'EURUSD,buy', from('198.51.100.1'))).status).toBe(202);
  });
});

describe('per-source allowedIps without a trusted proxy', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  it('judge the socket’s address: an X-Forwarded-For header from an untrusted peer is not believed', async () => {
    const { sourceId, inboundPath } = await seedSource(server);
    await server.admin('PATCH', `/api/admin/sources/${sourceId}`, { allowedIps: ['203.0.113.0/24'] });
    const spoofed = await post(`${server.url}${inboundPath}`, 'EURUSD,buy', {
      'content-type': 'text/plain',
      'x-forwarded-for': '203.0.113.5',
    });
    expect(spoofed.status).toBe(403);
    expect(spoofed.body.detail).toContain('127.0.0.1');
    await server.admin('PATCH', `/api/admin/sources/${sourceId}`, { allowedIps: ['127.0.0.1'] });
    expect((await post(`${server.url}${inboundPath}`, 'EURUSD,buy', { 'content-type': 'text/plain' })).status).toBe(
      202,
    );
  });
});
