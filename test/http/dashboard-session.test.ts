import { createHash } from 'node:crypto';
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

/** Signs in as the dashboard's page would; answers the session cookie as a browser sends it back. */
async function signIn(origin = server.url): Promise<string> {
  const res = await fetch(`${server.url}/api/dashboard/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin },
    body: JSON.stringify({ token: TEST_ADMIN_TOKEN }),
  });
  expect(res.status).toBe(201);
  const setCookie = res.headers.get('set-cookie')!;
  expect(setCookie).toMatch(/^signalgate_session=[\w-]{43}; /);
  expect(setCookie).toContain('HttpOnly');
  expect(setCookie).toContain('SameSite=Strict');
  expect(setCookie).toContain('Path=/');
  // Signed in over plain HTTP: no Secure flag, which the browser would refuse to send back.
  expect(setCookie).not.toContain('Secure');
  return setCookie.split(';')[0]!;
}

function asBrowser(
  cookie: string,
  method: string,
  path: string,
  opts: { origin?: string | null; body?: unknown } = {},
) {
  const origin = opts.origin === undefined ? server.url : opts.origin;
  return fetch(server.url + path, {
    method,
    headers: {
      cookie,
      ...(origin !== null && { origin }),
      ...(opts.body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(opts.body !== undefined && { body: JSON.stringify(opts.body) }),
  });
}

describe('the dashboard page', () => {
  it('is served at / with its assets, all from this server, under a strict Content-Security-Policy', async () => {
    const page = await fetch(`${server.url}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy')!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("style-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe|https?:/);
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await page.text();
    // Every script and style sheet the page names comes from this server, and none is inline.
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.every((ref) => ref.startsWith('/') || ref === 'data:,')).toBe(true);
    expect(html).not.toMatch(/<script>|<style|style="/);
    for (const ref of refs.filter((r) => r.startsWith('/'))) {
      const asset = await fetch(server.url + ref);
      expect(asset.status, ref).toBe(200);
    }
    expect((await fetch(`${server.url}/dashboard/vendor/uplot/uPlot.esm.js`)).status).toBe(200);
    // Only the two uPlot files are served out of node_modules.
    expect((await fetch(`${server.url}/dashboard/vendor/uplot/uPlot.cjs.js`)).status).toBe(404);
    expect((await fetch(`${server.url}/dashboard/../package.json`)).status).toBe(404);
  });
});

describe('dashboard sign-in', () => {
  it('takes the admin token only, and then the admin API takes the session cookie in place of the bearer token', async () => {
    const wrong = await fetch(`${server.url}/api/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url },
      body: JSON.stringify({ token: 'not-the-token' }),
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers.get('set-cookie')).toBeNull();
    expect(((await wrong.json()) as any).param).toBe('token');

    expect(await (await fetch(`${server.url}/api/dashboard/session`)).json()).toEqual({ signedIn: false });
    const cookie = await signIn();
    const session = (await (await asBrowser(cookie, 'GET', '/api/dashboard/session')).json()) as any;
    expect(session).toEqual({ signedIn: true, expiresAt: expect.any(String) });
    // Twelve hours from now.
    expect(Math.abs(Date.parse(session.expiresAt) - Date.now() - 12 * 3600_000)).toBeLessThan(60_000);

    const listed = await asBrowser(cookie, 'GET', '/api/admin/accounts');
    expect(listed.status).toBe(200);
    const created = await asBrowser(cookie, 'POST', '/api/admin/accounts', {
      body: { name: 'From the page', monthlySignalQuota: 5 },
    });
    expect(created.status).toBe(201);
    expect(await asBrowser('signalgate_session=made-up', 'GET', '/api/admin/accounts').then((r) => r.status)).toBe(401);
  });

  it('refuses a state change signed in by cookie unless it comes from the dashboard itself (its Origin)', async () => {
    const cookie = await signIn();
    const body = { body: { name: 'Forged', monthlySignalQuota: 5 } };
    for (const origin of [null, 'https://evil.example', 'http://127.0.0.1:1', 'null']) {
      const res = await asBrowser(cookie, 'POST', '/api/admin/accounts', { ...body, origin });
      expect(res.status, String(origin)).toBe(403);
      expect(((await res.json()) as any).code).toBe('CROSS_ORIGIN');
    }
    const before = (
      (await server.admin('GET', '/api/admin/accounts?limit=500')).body.accounts as Array<{ name: string }>
    ).map((a) => a.name);
    expect(before).not.toContain('Forged');
    // The public URL's origin counts as the dashboard too (a reverse proxy may rewrite Host).
    const viaProxy = await asBrowser(cookie, 'POST', '/api/admin/accounts', {
      ...body,
      origin: 'http://signals.example.test',
    });
    expect(viaProxy.status).toBe(201);
    // Sign-in and sign-out are state changes too.
    const forgedSignIn = await fetch(`${server.url}/api/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: 'https://evil.example' },
      body: JSON.stringify({ token: TEST_ADMIN_TOKEN }),
    });
    expect(forgedSignIn.status).toBe(403);
    expect(
      (await asBrowser(cookie, 'DELETE', '/api/dashboard/session', { origin: 'https://evil.example' })).status,
    ).toBe(403);
    expect((await asBrowser(cookie, 'GET', '/api/admin/accounts')).status).toBe(200);
  });

  it('marks the cookie Secure when the page was reached over HTTPS (its Origin says so)', async () => {
    // As behind a reverse proxy that terminates TLS: the browser's origin is https.
    const secure = await fetch(`${server.url}/api/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url.replace('http:', 'https:') },
      body: JSON.stringify({ token: TEST_ADMIN_TOKEN }),
    });
    expect(secure.status).toBe(201);
    expect(secure.headers.get('set-cookie')).toContain('Secure');
  });

  it('signs out: the session is over on the server, not only in the browser', async () => {
    const cookie = await signIn();
    const other = await signIn();
    const out = await asBrowser(cookie, 'DELETE', '/api/dashboard/session');
    expect(out.status).toBe(204);
    expect(out.headers.get('set-cookie')).toMatch(/^signalgate_session=; .*Expires=Thu, 01 Jan 1970/);
    // A copy of the cookie kept elsewhere no longer works.
    expect((await asBrowser(cookie, 'GET', '/api/admin/accounts')).status).toBe(401);
    expect(await (await asBrowser(cookie, 'GET', '/api/dashboard/session')).json()).toEqual({ signedIn: false });
    // Another sign-in is another session.
    expect((await asBrowser(other, 'GET', '/api/admin/accounts')).status).toBe(200);
  });

  it("keeps the session in the store as the digest of the cookie's id, bound to the admin token", async () => {
    const cookie = await signIn();
    const id = cookie.split('=')[1]!;
    const session = await server.store.dashboardSessions.get(createHash('sha256').update(id).digest('hex'));
    expect(session).toMatchObject({ adminTokenDigest: createHash('sha256').update(TEST_ADMIN_TOKEN).digest('hex') });
    expect(JSON.stringify(session)).not.toContain(id);
  });
});

describe('the live signal stream', () => {
  it('sends the newest page, then each new signal as it is logged, over server-sent events', async () => {
    const source = await seedSource(server);
    const first = await fetch(`${server.url}${source.inboundPath}`, { method: 'POST', body: 'EURUSD,buy,vol=0.1' });
    const firstId = ((await first.json()) as any).id;
    const controller = new AbortController();
    const res = await fetch(`${server.url}/api/admin/signals/stream?sourceId=${source.sourceId}`, {
      headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = readEvents(res.body!);
    try {
      const page = await events.next();
      expect(page.event).toBe('page');
      expect(page.data.map((s: any) => s.id)).toEqual([firstId]);
      const refused = await fetch(`${server.url}${source.inboundPath}`, {
        method: 'POST',
        body: 'EURUSD,buy,sl_pip=2',
      });
      const refusedId = ((await refused.json()) as any).signalId ?? null;
      const next = await events.next();
      expect(next.event).toBe('signal');
      expect(next.data).toMatchObject({
        status: 'rejected',
        code: 'UNKNOWN_PARAMETER',
        rawBody: 'EURUSD,buy,sl_pip=2',
      });
      if (refusedId !== null) expect(next.data.id).toBe(refusedId);
    } finally {
      controller.abort();
    }
  });

  it('refuses a filter that names nothing, as the list does', async () => {
    const res = await server.admin('GET', '/api/admin/signals/stream?sourceId=src_missing');
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'NOT_FOUND', param: 'sourceId' });
    expect((await server.admin('GET', '/api/admin/signals/stream?before=sig_x')).status).toBe(400);
  });
});

/** Server-sent events as they arrive: `next()` waits (at most 5 s) for the following one. */
function readEvents(body: ReadableStream<Uint8Array>) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  return {
    async next(): Promise<{ event: string; data: any }> {
      const deadline = Date.now() + 5000;
      for (;;) {
        const end = buffer.indexOf('\n\n');
        if (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          if (block.startsWith(':')) continue;
          const event = /^event: (.*)$/m.exec(block)![1]!;
          const data = JSON.parse(/^data: (.*)$/m.exec(block)![1]!);
          return { event, data };
        }
        if (Date.now() > deadline) throw new Error(`no event within 5 s; have: ${buffer}`);
        const { value, done } = await reader.read();
        if (done) throw new Error('the stream ended');
        buffer += decoder.decode(value, { stream: true });
      }
    },
  };
}
