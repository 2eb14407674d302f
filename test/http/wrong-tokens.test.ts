import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoggedTestServer, startLoggedTestServer } from '../support/logged-test-server.js';
import { TEST_ADMIN_TOKEN } from '../support/start-test-server.js';

/** The failures an address may send in a minute before its tokens are no longer looked at. */
const ALLOWED = 5;

let server: LoggedTestServer;
let stopped = false;
beforeAll(async () => {
  // Behind a trusted proxy, so each test can speak from an address of its own.
  server = await startLoggedTestServer({ trustProxy: ['127.0.0.1'] });
});
afterAll(async () => {
  if (!stopped) await server?.stop();
});

async function get(
  path: string,
  address: string,
  token: string | null,
): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(server.url + path, {
    headers: { 'x-forwarded-for': address, ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text.startsWith('{') ? JSON.parse(text) : text };
}

async function signIn(address: string, token: string): Promise<{ status: number; headers: Headers; body: any }> {
  const origin = server.url;
  const res = await fetch(`${server.url}/api/dashboard/session`, {
    method: 'POST',
    headers: { 'x-forwarded-for': address, origin, 'content-type': 'application/json' },
    body: JSON.stringify({ token }),
  });
  return { status: res.status, headers: res.headers, body: await res.json() };
}

function expectLockedOut(answer: { status: number; headers: Headers; body: any }, param: string): void {
  expect(answer.status).toBe(429);
  const wait = Number(answer.headers.get('retry-after'));
  expect(wait).toBeGreaterThanOrEqual(1);
  expect(wait).toBeLessThanOrEqual(60);
  expect(answer.body).toMatchObject({ code: 'TOO_MANY_WRONG_TOKENS', status: 429, param });
  expect(answer.body.detail).toMatch(/wait .*Retry-After.* send the right one/);
}

describe('wrong tokens, counted per client address', () => {
  it(`admin API: ${ALLOWED} wrong bearer tokens are answered 401, then 429 with Retry-After, and not even the right token is looked at from that address`, async () => {
    const attacker = '203.0.113.10';
    for (let i = 0; i < ALLOWED; i++)
      expect((await get('/api/admin/accounts', attacker, `wrong-${i}`)).status).toBe(401);
    expectLockedOut(await get('/api/admin/accounts', attacker, 'wrong-again'), 'Authorization');
    expectLockedOut(await get('/api/admin/accounts', attacker, TEST_ADMIN_TOKEN), 'Authorization');
    // Another address, another count: the right token there is answered at once.
    expect((await get('/api/admin/accounts', '203.0.113.11', TEST_ADMIN_TOKEN)).status).toBe(200);
  });

  it('a client with the right token is never slowed or refused, however often it calls', async () => {
    const answers = await Promise.all(
      Array.from({ length: 40 }, () => get('/api/admin/accounts', '203.0.113.20', TEST_ADMIN_TOKEN)),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
  });

  it('a request without any token is answered 401 and counts for nothing (no token, no guess)', async () => {
    const address = '203.0.113.30';
    for (let i = 0; i < ALLOWED + 3; i++) expect((await get('/api/admin/accounts', address, null)).status).toBe(401);
    expect((await get('/api/admin/accounts', address, TEST_ADMIN_TOKEN)).status).toBe(200);
  });

  it('/metrics: wrong tokens are limited the same way', async () => {
    const address = '203.0.113.40';
    for (let i = 0; i < ALLOWED; i++) expect((await get('/metrics', address, `wrong-${i}`)).status).toBe(401);
    expectLockedOut(await get('/metrics', address, TEST_ADMIN_TOKEN), 'Authorization');
  });

  it("the dashboard's sign-in: wrong admin tokens are limited the same way", async () => {
    const address = '203.0.113.50';
    for (let i = 0; i < ALLOWED; i++) expect((await signIn(address, `wrong-${i}`)).status).toBe(401);
    expectLockedOut(await signIn(address, TEST_ADMIN_TOKEN), 'token');
    expect((await signIn('203.0.113.51', TEST_ADMIN_TOKEN)).status).toBe(201);
  });

  it('an IPv6 client is counted by its /64, so it cannot start afresh from each of its addresses', async () => {
    for (let i = 0; i < ALLOWED; i++)
      expect((await get('/api/admin/accounts', `2001:db8:1:2::${i + 1}`, 'wrong')).status).toBe(401);
    expectLockedOut(await get('/api/admin/accounts', '2001:db8:1:2::ffff', 'wrong'), 'Authorization');
    expect((await get('/api/admin/accounts', '2001:db8:1:3::1', TEST_ADMIN_TOKEN)).status).toBe(200);
  });

  it('counted in /metrics by credential, and logged once per address per minute, not a line per request', async () => {
    const metrics = (await get('/metrics', '198.51.100.1', TEST_ADMIN_TOKEN)).body as string;
    expect(metrics).toMatch(/^signalgate_wrong_tokens_total\{credential="admin",outcome="wrong"\} 10$/m);
    expect(metrics).toMatch(/^signalgate_wrong_tokens_total\{credential="admin",outcome="refused"\} 3$/m);
    expect(metrics).toMatch(/^signalgate_wrong_tokens_total\{credential="metrics",outcome="wrong"\} 5$/m);
    expect(metrics).toMatch(/^signalgate_wrong_tokens_total\{credential="metrics",outcome="refused"\} 1$/m);
    expect(metrics).toMatch(/^signalgate_wrong_tokens_total\{credential="dashboard_sign_in",outcome="wrong"\} 5$/m);
    expect(metrics).toMatch(/^signalgate_wrong_tokens_total\{credential="dashboard_sign_in",outcome="refused"\} 1$/m);

    await server.stop();
    stopped = true;
    const lines = server.logLines();
    const counted = lines.filter((l) => typeof l.msg === 'string' && l.msg.includes('wrong token'));
    expect(counted).toEqual([
      expect.objectContaining({
        level: 40,
        clientAddress: '203.0.113.10',
        wrong: 5,
        refused: 2,
        credentials: ['admin'],
      }),
      expect.objectContaining({ clientAddress: '203.0.113.40', wrong: 5, refused: 1, credentials: ['metrics'] }),
      expect.objectContaining({
        clientAddress: '203.0.113.50',
        wrong: 5,
        refused: 1,
        credentials: ['dashboard_sign_in'],
      }),
      expect.objectContaining({ clientAddress: '2001:db8:1:2::/64', wrong: 5, refused: 1 }),
    ]);
    // No access line for any of those requests; the successful ones keep theirs.
    const access = lines.filter((l) => l.msg === 'request');
    expect(access.filter((l) => l.statusCode === 429)).toEqual([]);
    expect(access.filter((l) => l.clientAddress === '203.0.113.10')).toEqual([]);
    expect(access.filter((l) => l.clientAddress === '203.0.113.20')).toHaveLength(40);
    expect(JSON.stringify(lines)).not.toContain(TEST_ADMIN_TOKEN);
  });
});
