import { execFile } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, seedSource, sign } from '../support/seed-source.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

// On SQLite these requests are checked on the store's inbound thread (whatever the CPU count),
// on PostgreSQL on the event loop.
const run = promisify(execFile);
const TEXT = { 'content-type': 'text/plain' };
const SECRET = 'timestamp-secret-42';
const SIGNAL = 'EURUSD,buy,vol=0.1';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ config: { inboundThread: 'on' } });
});
afterAll(async () => {
  await server?.stop();
});

const nowSeconds = () => Math.floor(Date.now() / 1000);

function signedAt(ts: string, body: string, secret = SECRET) {
  return {
    'x-signature-timestamp': ts,
    'x-signature': `sha256=${createHmac('sha256', secret).update(`${ts}.${body}`).digest('hex')}`,
  };
}

async function usedQuota(accountId: string): Promise<number> {
  return (await server.admin('GET', `/api/admin/accounts/${accountId}/usage`)).body.used;
}

async function lastLogEntry(sourceId: string) {
  return (await server.admin('GET', `/api/admin/signals?sourceId=${sourceId}&limit=1`)).body.signals[0];
}

describe('X-Signature-Timestamp', () => {
  it('a fresh signed timestamp is accepted; one up to a few minutes off either way too', async () => {
    const src = await seedSource(server, { hmacSecret: SECRET });
    for (const offset of [0, -240, 240]) {
      const ts = String(nowSeconds() + offset);
      const res = await post(server.url + src.inboundPath, SIGNAL, { ...TEXT, ...signedAt(ts, SIGNAL) });
      expect({ offset, status: res.status, body: res.body }).toMatchObject({
        offset,
        status: 202,
        body: { status: 'queued' },
      });
    }
    expect(await usedQuota(src.accountId)).toBe(3);
  });

  it('a stale or future timestamp, correctly signed, is refused with SIGNATURE_TIMESTAMP_OUT_OF_RANGE, logged, not charged', async () => {
    const src = await seedSource(server, { hmacSecret: SECRET });
    for (const offset of [-3 * 86_400, -400, 400]) {
      const ts = String(nowSeconds() + offset);
      const res = await post(server.url + src.inboundPath, SIGNAL, { ...TEXT, ...signedAt(ts, SIGNAL) });
      expect(res.status).toBe(401);
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(res.body).toMatchObject({ code: 'SIGNATURE_TIMESTAMP_OUT_OF_RANGE', param: 'X-Signature-Timestamp' });
      expect(res.body.detail).toContain(offset < 0 ? 's before the server' : 's after the server');
      expect(res.body.detail).toContain('300 s');
      expect(await lastLogEntry(src.sourceId)).toMatchObject({
        status: 'rejected',
        code: 'SIGNATURE_TIMESTAMP_OUT_OF_RANGE',
        rawBody: SIGNAL,
      });
    }
    expect(await usedQuota(src.accountId)).toBe(0);
  });

  it('a timestamp changed after signing, or left out of the signed input, is HMAC_MISMATCH', async () => {
    const src = await seedSource(server, { hmacSecret: SECRET });
    const ts = String(nowSeconds() - 3600);
    // A captured stale request whose timestamp is moved to now no longer fits its signature.
    const captured = signedAt(ts, SIGNAL);
    const moved = await post(server.url + src.inboundPath, SIGNAL, {
      ...TEXT,
      ...captured,
      'x-signature-timestamp': String(nowSeconds()),
    });
    expect(moved.status).toBe(401);
    expect(moved.body).toMatchObject({ code: 'HMAC_MISMATCH', param: 'X-Signature' });
    expect(moved.body.detail).toContain("'.'");
    // A signature over the body alone, sent with a timestamp, does not cover the timestamp.
    const bodyOnly = await post(server.url + src.inboundPath, SIGNAL, {
      ...TEXT,
      'x-signature': sign(SECRET, SIGNAL),
      'x-signature-timestamp': String(nowSeconds()),
    });
    expect(bodyOnly.body).toMatchObject({ code: 'HMAC_MISMATCH', param: 'X-Signature' });
    for (const bad of ['', 'soon', '1.5', '-60', '1234567890123']) {
      const res = await post(server.url + src.inboundPath, SIGNAL, { ...TEXT, ...signedAt(bad, SIGNAL) });
      expect({ bad, status: res.status, code: res.body.code, param: res.body.param }).toEqual({
        bad,
        status: 401,
        code: 'HMAC_MISMATCH',
        param: 'X-Signature-Timestamp',
      });
    }
    expect(await usedQuota(src.accountId)).toBe(0);
  });

  it('without the header a signature over the body alone is accepted as before; the plain secret cannot carry a timestamp', async () => {
    const src = await seedSource(server, { hmacSecret: SECRET });
    expect(
      (await post(server.url + src.inboundPath, SIGNAL, { ...TEXT, 'x-signature': sign(SECRET, SIGNAL) })).status,
    ).toBe(202);
    expect((await post(server.url + src.inboundPath, SIGNAL, { ...TEXT, 'x-signalgate-secret': SECRET })).status).toBe(
      202,
    );
    const withSecret = await post(server.url + src.inboundPath, SIGNAL, {
      ...TEXT,
      'x-signalgate-secret': SECRET,
      'x-signature-timestamp': String(nowSeconds()),
    });
    expect(withSecret.body).toMatchObject({ code: 'HMAC_MISMATCH', param: 'X-Signature-Timestamp' });
    // A source without a secret ignores signature headers, the timestamp included.
    const open = await seedSource(server);
    expect((await post(server.url + open.inboundPath, SIGNAL, { ...TEXT, 'x-signature-timestamp': '1' })).status).toBe(
      202,
    );
  });

  it('leaves the duplicate guard as it was: the same body re-signed with a new timestamp within the window is the first signal', async () => {
    const src = await seedSource(server, { hmacSecret: SECRET });
    expect(
      (await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, { duplicateWindowSeconds: 60 })).status,
    ).toBe(200);
    const first = await post(server.url + src.inboundPath, SIGNAL, {
      ...TEXT,
      ...signedAt(String(nowSeconds() - 5), SIGNAL),
    });
    const again = await post(server.url + src.inboundPath, SIGNAL, {
      ...TEXT,
      ...signedAt(String(nowSeconds()), SIGNAL),
    });
    expect([first.status, again.status]).toEqual([202, 202]);
    expect(again.body.id).toBe(first.body.id);
    expect(await usedQuota(src.accountId)).toBe(1);
  });

  it('leaves idempotency as it was: a retry re-signed with a new timestamp gets the original answer', async () => {
    const src = await seedSource(server, { hmacSecret: SECRET });
    const key = { 'idempotency-key': 'retry-with-new-timestamp' };
    const first = await post(server.url + src.inboundPath, SIGNAL, {
      ...TEXT,
      ...key,
      ...signedAt(String(nowSeconds() - 10), SIGNAL),
    });
    expect(first.status).toBe(202);
    const retry = await post(server.url + src.inboundPath, SIGNAL, {
      ...TEXT,
      ...key,
      ...signedAt(String(nowSeconds()), SIGNAL),
    });
    expect(retry.status).toBe(202);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.body.id).toBe(first.body.id);
    expect(await usedQuota(src.accountId)).toBe(1);
  });
});

describe('the sender examples in docs/inbound-api.md', () => {
  const doc = readFileSync('docs/inbound-api.md', 'utf8');
  const section = doc.slice(doc.indexOf('### Signed timestamp'));
  const block = (lang: string) => {
    const match = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(section);
    if (match === null) throw new Error(`no ${lang} block in the signed-timestamp section`);
    return match[1]!;
  };

  it('the openssl and curl lines, run as written, are accepted', async () => {
    const src = await seedSource(server, { hmacSecret: SECRET });
    const { stdout } = await run('bash', ['-euc', block('sh')], {
      env: { ...process.env, SECRET, INBOUND_URL: server.url + src.inboundPath },
    });
    expect(JSON.parse(stdout)).toMatchObject({ status: 'queued', signal: { symbol: 'EURUSD', action: 'buy' } });
  });

  it('the Node.js snippet, run as written, is accepted', async () => {
    const src = await seedSource(server, { hmacSecret: SECRET });
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-sender-'));
    try {
      const file = path.join(dir, 'send.mjs');
      writeFileSync(file, block('js'));
      const { stdout } = await run(process.execPath, [file], {
        env: { ...process.env, SECRET, INBOUND_URL: server.url + src.inboundPath },
      });
      expect(stdout).toMatch(/^202 /);
      expect(JSON.parse(stdout.slice(4))).toMatchObject({
        status: 'queued',
        signal: { symbol: 'EURUSD', action: 'buy' },
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
