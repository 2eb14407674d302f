import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { post, seedSource, sign, type SeededSource } from '../support/seed-source.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { startLoggedTestServer } from '../support/logged-test-server.js';

const TEXT = { 'content-type': 'text/plain' };
const JSON_TYPE = { 'content-type': 'application/json' };
const SIGNAL = 'EURUSD,buy,vol_pctbal_loss=1,sl_pips=20,tp1_pips=20,tp2_pips=40';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

async function usage(accountId: string) {
  return (await server.admin('GET', `/api/admin/accounts/${accountId}/usage`)).body;
}

async function lastLogEntry(sourceId: string) {
  const list = await server.admin('GET', `/api/admin/signals?sourceId=${sourceId}&limit=1`);
  return list.body.signals[0];
}

function expectProblem(res: { status: number; headers: Headers; body: any }, status: number, code: string) {
  expect({ status: res.status, code: res.body?.code }).toEqual({ status, code });
  expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(res.body).toMatchObject({
    type: expect.any(String),
    title: expect.any(String),
    status,
    code,
    detail: expect.any(String),
  });
  expect(res.body.detail.length).toBeGreaterThan(10);
}

describe('a signal accepted', () => {
  it('answers 202 with the id, the normalized signal and the quota, after which the log and usage show it', async () => {
    const src = await seedSource(server, { quota: 10 });
    const res = await post(server.url + src.inboundPath, SIGNAL, TEXT);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({
      id: expect.stringMatching(/^sig_/),
      status: 'queued',
      signal: {
        symbol: 'EURUSD',
        action: 'buy',
        volume: { type: 'pctbal_loss', value: 1 },
        sl: { type: 'pips', value: 20 },
        tp: [
          { type: 'pips', value: 20, pct: 50 },
          { type: 'pips', value: 40, pct: 50 },
        ],
      },
      quota: { used: 1, limit: 10, period: expect.stringMatching(/^\d{4}-\d{2}$/) },
      // The account has no agent: nobody will execute it, and the answer says so.
      agents: 0,
    });
    expect(await usage(src.accountId)).toMatchObject({ used: 1, limit: 10 });
    const record = await server.admin('GET', `/api/admin/signals/${res.body.id}`);
    expect(record.status).toBe(200);
    expect(record.body).toMatchObject({
      id: res.body.id,
      status: 'accepted',
      outcome: {},
      rawBody: SIGNAL,
      signal: res.body.signal,
    });
  });

  it('normalizes the text and the typed JSON forms to the same signal', async () => {
    const src = await seedSource(server);
    const text = await post(server.url + src.inboundPath, 'EURUSD,buy,vol=0.1,sl_pips=20,tp_pips=40', TEXT);
    const json = await post(
      server.url + src.inboundPath,
      '{"symbol":"eurusd","action":"BUY","volume":0.1,"volumeType":"lots","sl":20,"slType":"pips","tp":40,"tpType":"pips"}',
      JSON_TYPE,
    );
    expect(text.status).toBe(202);
    expect(json.status).toBe(202);
    expect(json.body.signal).toEqual(text.body.signal);
  });

  it('reads a body without Content-Type, or sent as a form by curl -d, by its first byte', async () => {
    const src = await seedSource(server);
    const bare = await post(server.url + src.inboundPath, Buffer.from('  {"symbol":"GBPUSD","action":"sell"}'));
    expect(bare.status).toBe(202);
    expect(bare.body.signal).toEqual({ symbol: 'GBPUSD', action: 'sell' });
    const form = await post(server.url + src.inboundPath, 'XAUUSD,long,vol=0.5', {
      'content-type': 'application/x-www-form-urlencoded',
    });
    expect(form.status).toBe(202);
    expect(form.body.signal).toEqual({ symbol: 'XAUUSD', action: 'buy', volume: { type: 'lots', value: 0.5 } });
    const vendorJson = await post(server.url + src.inboundPath, '{"symbol":"USDJPY","action":"closeall"}', {
      'content-type': 'application/vnd.tradingview+json; charset=utf-8',
    });
    expect(vendorJson.status).toBe(202);
  });
});

describe('the inbound checks of docs/inbound-api.md, each row', () => {
  it('1: an unknown key is 401 INVALID_SOURCE_KEY and is not logged anywhere', async () => {
    expectProblem(await post(`${server.url}/api/inbound/nope-not-a-key`, SIGNAL, TEXT), 401, 'INVALID_SOURCE_KEY');
  });

  it('2: an inactive source is 401 SOURCE_INACTIVE, logged, not charged; active again it accepts', async () => {
    const src = await seedSource(server);
    expect((await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, { active: false })).body.active).toBe(
      false,
    );
    expectProblem(await post(server.url + src.inboundPath, SIGNAL, TEXT), 401, 'SOURCE_INACTIVE');
    expect(await lastLogEntry(src.sourceId)).toMatchObject({
      status: 'rejected',
      code: 'SOURCE_INACTIVE',
      rawBody: SIGNAL,
    });
    expect((await usage(src.accountId)).used).toBe(0);
    await server.admin('PATCH', `/api/admin/sources/${src.sourceId}`, { active: true });
    expect((await post(server.url + src.inboundPath, SIGNAL, TEXT)).status).toBe(202);
  });

  it('3: a body over 16 KiB is 413 PAYLOAD_TOO_LARGE, before the signature is looked at; 16 KiB exactly passes that check', async () => {
    const src = await seedSource(server, { hmacSecret: 'top-secret' });
    const big = `EURUSD,buy,comment="${'x'.repeat(16 * 1024)}"`;
    expectProblem(
      await post(server.url + src.inboundPath, big, { ...TEXT, 'x-signature': 'sha256=00' }),
      413,
      'PAYLOAD_TOO_LARGE',
    );
    expect(await lastLogEntry(src.sourceId)).toMatchObject({
      status: 'rejected',
      code: 'PAYLOAD_TOO_LARGE',
      rawBody: '',
    });
    const exact = Buffer.alloc(16 * 1024, 0x20);
    exact.write('EURUSD,buy');
    const res = await post(server.url + src.inboundPath, exact, { ...TEXT, 'x-signature': sign('top-secret', exact) });
    expect(res.status).toBe(202);
  });

  it('4: with an HMAC secret, only a signature over the exact bytes passes', async () => {
    const secret = 'whsec-9f8e7d6c5b4a';
    const src = await seedSource(server, { hmacSecret: secret });
    const body = '{"symbol": "EURUSD", "action": "buy", "vol": 0.1}';
    const ok = await post(server.url + src.inboundPath, body, { ...JSON_TYPE, 'x-signature': sign(secret, body) });
    expect(ok.status).toBe(202);
    const upper = await post(server.url + src.inboundPath, body, {
      ...JSON_TYPE,
      'x-signature': sign(secret, body)
        .replace(/^sha256=/, '')
        .toUpperCase()
        .replace(/^/, 'sha256='),
    });
    expect(upper.status).toBe(202);
    // The same JSON re-serialized (key order, spacing) is different bytes: its signature does not fit the sent body.
    const reserialized = JSON.stringify(JSON.parse(body));
    expectProblem(
      await post(server.url + src.inboundPath, body, { ...JSON_TYPE, 'x-signature': sign(secret, reserialized) }),
      401,
      'HMAC_MISMATCH',
    );
    expectProblem(await post(server.url + src.inboundPath, body, JSON_TYPE), 401, 'HMAC_MISMATCH');
    expectProblem(
      await post(server.url + src.inboundPath, body, { ...JSON_TYPE, 'x-signature': 'sha256=zz' }),
      401,
      'HMAC_MISMATCH',
    );
    expectProblem(
      await post(server.url + src.inboundPath, body, { ...JSON_TYPE, 'x-signature': sign('other-secret', body) }),
      401,
      'HMAC_MISMATCH',
    );
    expect((await usage(src.accountId)).used).toBe(2);
  });

  it('4: the X-Signalgate-Secret header is accepted; the retired ?secret= never authenticates and says so', async () => {
    const src = await seedSource(server, { hmacSecret: 'plain-shared-secret' });
    expect(
      (await post(server.url + src.inboundPath, SIGNAL, { ...TEXT, 'x-signalgate-secret': 'plain-shared-secret' }))
        .status,
    ).toBe(202);
    expectProblem(
      await post(server.url + src.inboundPath, SIGNAL, { ...TEXT, 'x-signalgate-secret': 'plain-shared-secreT' }),
      401,
      'HMAC_MISMATCH',
    );
    const query = await post(`${server.url}${src.inboundPath}?secret=plain-shared-secret`, SIGNAL, TEXT);
    expectProblem(query, 401, 'HMAC_MISMATCH');
    expect(query.body.detail).toMatch(/header/i);
    expect(query.body.detail).toMatch(/retired/i);
  });

  it('5: an unusable media type is 415, checked after the signature', async () => {
    const src = await seedSource(server, { hmacSecret: 's3cr3t-value' });
    const xml = '<signal/>';
    expectProblem(
      await post(server.url + src.inboundPath, xml, { 'content-type': 'application/xml' }),
      401,
      'HMAC_MISMATCH',
    );
    expectProblem(
      await post(server.url + src.inboundPath, xml, {
        'content-type': 'application/xml',
        'x-signature': sign('s3cr3t-value', xml),
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    expectProblem(
      await post(server.url + src.inboundPath, SIGNAL, {
        'content-type': 'text/plain; charset=iso-8859-1',
        'x-signature': sign('s3cr3t-value', SIGNAL),
      }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
  });

  it('5: a compressed body is 415 naming Content-Encoding, not a misleading PARSE_ERROR', async () => {
    const src = await seedSource(server);
    const gzipped = gzipSync(SIGNAL);
    const res = await post(server.url + src.inboundPath, gzipped, {
      'content-type': 'text/plain',
      'content-encoding': 'gzip',
    });
    expectProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE');
    expect(res.body).toMatchObject({ param: 'Content-Encoding', detail: expect.stringContaining('uncompressed') });
    const plain = await post(server.url + src.inboundPath, SIGNAL, {
      'content-type': 'text/plain',
      'content-encoding': 'identity',
    });
    expect(plain.status).toBe(202);
  });

  it('6: a body that is not one signal is 400 PARSE_ERROR', async () => {
    const src = await seedSource(server);
    expectProblem(await post(server.url + src.inboundPath, '{"symbol": "EURUSD",', JSON_TYPE), 400, 'PARSE_ERROR');
    expectProblem(await post(server.url + src.inboundPath, '[1,2]', JSON_TYPE), 400, 'PARSE_ERROR');
    expectProblem(await post(server.url + src.inboundPath, 'EURUSD,buy\nGBPUSD,sell', TEXT), 400, 'PARSE_ERROR');
    expectProblem(
      await post(server.url + src.inboundPath, Buffer.from([0x45, 0x55, 0xff, 0xfe, 0x2c]), TEXT),
      400,
      'PARSE_ERROR',
    );
    expect(await lastLogEntry(src.sourceId)).toMatchObject({
      status: 'rejected',
      code: 'PARSE_ERROR',
      httpStatus: 400,
    });
  });

  it('7: an invalid signal is 422 with the first problem in body order, all problems listed, nothing charged', async () => {
    const src = await seedSource(server);
    const res = await post(server.url + src.inboundPath, 'EURUSD,buy,sl=20,vol=0', TEXT);
    expectProblem(res, 422, 'UNKNOWN_PARAMETER');
    expect(res.body.param).toBe('sl');
    expect(res.body.detail).toContain('sl_pips');
    expect(res.body.errors.map((e: { code: string }) => e.code)).toEqual(['UNKNOWN_PARAMETER', 'INVALID_VOLUME']);
    expectProblem(await post(server.url + src.inboundPath, '{"action":"buy"}', JSON_TYPE), 422, 'MISSING_SYMBOL');
    expectProblem(await post(server.url + src.inboundPath, '{"symbol":"EURUSD"}', JSON_TYPE), 422, 'MISSING_ACTION');
    expectProblem(await post(server.url + src.inboundPath, 'EURUSD,hodl', TEXT), 422, 'UNKNOWN_ACTION');
    expectProblem(await post(server.url + src.inboundPath, 'EURUSD,buy,vol_dollar=50', TEXT), 422, 'SL_REQUIRED');
    expectProblem(await post(server.url + src.inboundPath, 'EURUSD,buylimit,vol=1', TEXT), 422, 'ENTRY_REQUIRED');
    expectProblem(await post(server.url + src.inboundPath, 'EURUSD,buy,vol=-1', TEXT), 422, 'INVALID_VOLUME');
    expectProblem(
      await post(server.url + src.inboundPath, 'EURUSD,buy,sl_pips=10,sl_price=1.1', TEXT),
      422,
      'INVALID_PARAMETER',
    );
    expect((await usage(src.accountId)).used).toBe(0);
    expect(await lastLogEntry(src.sourceId)).toMatchObject({
      status: 'rejected',
      code: 'INVALID_PARAMETER',
      httpStatus: 422,
    });
  });

  it('8: past the monthly quota it is 429 QUOTA_SIGNALS_IN with Retry-After; an invalid signal is still 422', async () => {
    const src = await seedSource(server, { quota: 2 });
    expect((await post(server.url + src.inboundPath, SIGNAL, TEXT)).status).toBe(202);
    expect((await post(server.url + src.inboundPath, SIGNAL, TEXT)).status).toBe(202);
    const over = await post(server.url + src.inboundPath, SIGNAL, TEXT);
    expectProblem(over, 429, 'QUOTA_SIGNALS_IN');
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(31 * 24 * 3600);
    expectProblem(await post(server.url + src.inboundPath, 'EURUSD,hodl', TEXT), 422, 'UNKNOWN_ACTION');
    expect(await usage(src.accountId)).toMatchObject({ used: 2, limit: 2 });
    expect(await lastLogEntry(src.sourceId)).toMatchObject({ status: 'rejected', code: 'UNKNOWN_ACTION' });
  });

  it('a zero quota refuses every signal', async () => {
    const src = await seedSource(server, { quota: 0 });
    expectProblem(await post(server.url + src.inboundPath, SIGNAL, TEXT), 429, 'QUOTA_SIGNALS_IN');
  });

  it('a percent-encoded key names the same source; a path below the key is no inbound URL', async () => {
    const src = await seedSource(server);
    const key = src.inboundPath.slice('/api/inbound/'.length);
    const encoded = `/api/inbound/%${key.charCodeAt(0).toString(16).toUpperCase()}${key.slice(1)}`;
    const res = await post(server.url + encoded, SIGNAL, TEXT);
    expect(res.status).toBe(202);
    expectProblem(await post(`${server.url}/api/inbound/%E0%A4%A`, SIGNAL, TEXT), 401, 'INVALID_SOURCE_KEY');
    expectProblem(await post(`${server.url}${src.inboundPath}/more`, SIGNAL, TEXT), 404, 'NOT_FOUND');
    expectProblem(await post(`${server.url}/api/inbound/`, SIGNAL, TEXT), 404, 'NOT_FOUND');
    const malformed = await fetch(`${server.url}/api/inbound/%E0%A4%A`);
    expectProblem(
      { status: malformed.status, headers: malformed.headers, body: await malformed.json() },
      400,
      'INVALID_REQUEST',
    );
  });

  it('GET on the inbound path is 405 with Allow: POST', async () => {
    const src = await seedSource(server);
    const res = await fetch(server.url + src.inboundPath);
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });
});

describe('the quota under concurrency', () => {
  it('200 parallel requests against a quota of 50 give exactly 50 × 202 and 150 × 429', async () => {
    const src = await seedSource(server, { quota: 50 });
    const results = await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        post(server.url + src.inboundPath, `EURUSD,buy,vol=0.01,comment=n${i}`, TEXT),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 202)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(150);
    expect((await usage(src.accountId)).used).toBe(50);
    const ids = new Set(results.filter((r) => r.status === 202).map((r) => r.body.id));
    expect(ids.size).toBe(50);
  });
});

describe('Idempotency-Key', () => {
  it('a repeat gets the original answer and is neither charged nor logged twice', async () => {
    const src = await seedSource(server, { quota: 5 });
    const headers = { ...TEXT, 'idempotency-key': 'alert-42' };
    const first = await post(server.url + src.inboundPath, SIGNAL, headers);
    const again = await post(server.url + src.inboundPath, SIGNAL, headers);
    expect(first.status).toBe(202);
    expect(again.status).toBe(202);
    expect(again.body).toEqual(first.body);
    expect((await usage(src.accountId)).used).toBe(1);
    const log = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}`);
    expect(log.body.signals).toHaveLength(1);
  });

  it('concurrent repeats of one key give one signal', async () => {
    const src = await seedSource(server, { quota: 100 });
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        post(server.url + src.inboundPath, SIGNAL, { ...TEXT, 'idempotency-key': 'burst-1' }),
      ),
    );
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(results.every((r) => r.status === 202)).toBe(true);
    expect((await usage(src.accountId)).used).toBe(1);
  });

  it('the same key with a different body is refused, and the key is per source', async () => {
    const src = await seedSource(server);
    const other = await seedSource(server, { accountId: src.accountId });
    expect((await post(server.url + src.inboundPath, SIGNAL, { ...TEXT, 'idempotency-key': 'k1' })).status).toBe(202);
    expectProblem(
      await post(server.url + src.inboundPath, 'GBPUSD,sell', { ...TEXT, 'idempotency-key': 'k1' }),
      422,
      'IDEMPOTENCY_KEY_REUSED',
    );
    expect(
      (await post(server.url + other.inboundPath, 'GBPUSD,sell', { ...TEXT, 'idempotency-key': 'k1' })).status,
    ).toBe(202);
  });

  it('a different request under a used key is refused with 422, logged as its own rejected entry, and leaves the key with the original', async () => {
    const src = await seedSource(server, { quota: 5 });
    const headers = { ...TEXT, 'idempotency-key': 'alert-7' };
    const original = await post(server.url + src.inboundPath, SIGNAL, headers);
    expect(original.status).toBe(202);

    const reused = await post(server.url + src.inboundPath, 'GBPUSD,sell', headers);
    expectProblem(reused, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(reused.body.param).toBe('Idempotency-Key');
    expect(reused.body.detail).toContain(original.body.id);
    // It is not the original answer replayed.
    expect(reused.headers.get('idempotent-replayed')).toBeNull();

    const entry = await lastLogEntry(src.sourceId);
    expect(entry).toMatchObject({
      status: 'rejected',
      httpStatus: 422,
      code: 'IDEMPOTENCY_KEY_REUSED',
      detail: reused.body.detail,
      param: 'Idempotency-Key',
      rawBody: 'GBPUSD,sell',
      contentType: 'text/plain',
      idempotencyKey: 'alert-7',
      signal: null,
      quota: null,
    });
    expect(entry.id).not.toBe(original.body.id);
    expect((await server.admin('GET', `/api/admin/signals/${entry.id}`)).body.deliveries).toEqual([]);

    // The key still answers the original request with the original answer, and nothing was charged twice.
    const repeat = await post(server.url + src.inboundPath, SIGNAL, headers);
    expect(repeat.status).toBe(202);
    expect(repeat.body).toEqual(original.body);
    expect(repeat.headers.get('idempotent-replayed')).toBe('true');
    const again = await post(server.url + src.inboundPath, 'GBPUSD,sell', headers);
    expectProblem(again, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect((await usage(src.accountId)).used).toBe(1);
    const log = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}`);
    expect(log.body.signals.map((s: { rawBody: string; code: string | null }) => [s.rawBody, s.code])).toEqual([
      ['GBPUSD,sell', 'IDEMPOTENCY_KEY_REUSED'],
      ['GBPUSD,sell', 'IDEMPOTENCY_KEY_REUSED'],
      [SIGNAL, null],
    ]);
  });

  it('the access log line of a reused key names the refused request, not the original', async () => {
    const logged = await startLoggedTestServer();
    let originalId: string;
    let refusedId: string;
    try {
      const src = await seedSource(logged);
      const headers = { ...TEXT, 'idempotency-key': 'alert-8' };
      const original = await post(logged.url + src.inboundPath, SIGNAL, headers);
      expect(original.status).toBe(202);
      originalId = original.body.id;
      expect((await post(logged.url + src.inboundPath, 'GBPUSD,sell', headers)).status).toBe(422);
      const list = await logged.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}&limit=1`);
      refusedId = list.body.signals[0].id;
      expect(refusedId).not.toBe(originalId);
    } finally {
      // Stopping writes out the access lines still waiting for the next turn.
      await logged.stop();
    }
    const access = logged
      .logLines()
      .filter((line) => typeof line.url === 'string' && line.url.startsWith('/api/inbound/'));
    expect(access.map((line) => [line.statusCode, line.signalId])).toEqual([
      [202, originalId],
      [422, refusedId],
    ]);
  });

  it('a rejected request is answered the same way again', async () => {
    const src = await seedSource(server);
    const headers = { ...TEXT, 'idempotency-key': 'bad-1' };
    const first = await post(server.url + src.inboundPath, 'EURUSD,hodl', headers);
    const again = await post(server.url + src.inboundPath, 'EURUSD,hodl', headers);
    expectProblem(again, 422, 'UNKNOWN_ACTION');
    expect(again.body).toEqual(first.body);
  });
});

describe('the signal log', () => {
  it('pages newest first and filters by status', async () => {
    const src: SeededSource = await seedSource(server);
    for (const body of ['EURUSD,buy', 'EURUSD,hodl', 'GBPUSD,sell', 'USDJPY,nope'])
      await post(server.url + src.inboundPath, body, TEXT);
    const page1 = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}&limit=3`);
    expect(page1.body.signals.map((s: { rawBody: string }) => s.rawBody)).toEqual([
      'USDJPY,nope',
      'GBPUSD,sell',
      'EURUSD,hodl',
    ]);
    expect(page1.body.next).toEqual(expect.any(String));
    const page2 = await server.admin(
      'GET',
      `/api/admin/signals?sourceId=${src.sourceId}&limit=3&before=${page1.body.next}`,
    );
    expect(page2.body.signals.map((s: { rawBody: string }) => s.rawBody)).toEqual(['EURUSD,buy']);
    expect(page2.body.next).toBeNull();
    const rejected = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}&status=rejected`);
    expect(rejected.body.signals.map((s: { code: string }) => s.code)).toEqual(['UNKNOWN_ACTION', 'UNKNOWN_ACTION']);
    // An exactly full last page has no next page.
    const exact = await server.admin(
      'GET',
      `/api/admin/signals?sourceId=${src.sourceId}&limit=2&before=${page1.body.signals[1].id}`,
    );
    expect(exact.body.signals.map((s: { rawBody: string }) => s.rawBody)).toEqual(['EURUSD,hodl', 'EURUSD,buy']);
    expect(exact.body.next).toBeNull();
    const whole = await server.admin('GET', `/api/admin/signals?sourceId=${src.sourceId}&limit=4`);
    expect(whole.body.signals).toHaveLength(4);
    expect(whole.body.next).toBeNull();
    const bad = await server.admin('GET', `/api/admin/signals?status=done`);
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'INVALID_REQUEST', param: 'status' });
  });
});

describe('what a refusal may make the server write', () => {
  it('answers and logs a body of thousands of unknown parameters with its first 10 problems and a count of the rest, and keeps its first KiB', async () => {
    const src = await seedSource(server);
    const names: string[] = [];
    for (let i = 0; `EURUSD,buy,${names.join(',')}`.length < 16_000; i++) names.push(`zz${i}=1`);
    const body = `EURUSD,buy,${names.join(',')}`;
    const res = await post(server.url + src.inboundPath, body, TEXT);
    expectProblem(res, 422, 'UNKNOWN_PARAMETER');
    expect(res.body.errors).toHaveLength(11);
    expect(res.body.errors.slice(0, 10).map((e: { code: string }) => e.code)).toEqual(
      Array(10).fill('UNKNOWN_PARAMETER'),
    );
    expect(res.body.errors[10]).toEqual({
      code: 'MORE_PROBLEMS',
      detail: `${names.length - 10} more problems are not listed; fix the ones above and send again to see the rest`,
    });
    expect(JSON.stringify(res.body).length).toBeLessThan(4096);

    const entry = await lastLogEntry(src.sourceId);
    expect(entry).toMatchObject({ status: 'rejected', code: 'UNKNOWN_PARAMETER', errors: res.body.errors });
    expect(entry.rawBody).toBe(
      `${body.slice(0, 1024)}…[cut by signalgate: the first 1024 of ${body.length} bytes are kept]`,
    );
    expect(JSON.stringify(entry).length).toBeLessThan(6144);
  });

  it('keeps ten problems as they are, with no count', async () => {
    const src = await seedSource(server);
    const body = `EURUSD,buy,${Array.from({ length: 10 }, (_, i) => `zz${i}=1`).join(',')}`;
    const res = await post(server.url + src.inboundPath, body, TEXT);
    expect(res.body.errors.map((e: { code: string }) => e.code)).toEqual(Array(10).fill('UNKNOWN_PARAMETER'));
    expect((await lastLogEntry(src.sourceId)).rawBody).toBe(body);
  });

  it('keeps an accepted signal whole, however long its body', async () => {
    const src = await seedSource(server);
    const body = `{"symbol":"EURUSD","action":"buy",${' '.repeat(8000)}"vol":0.1}`;
    const res = await post(server.url + src.inboundPath, body, JSON_TYPE);
    expect(res.status).toBe(202);
    expect((await server.admin('GET', `/api/admin/signals/${res.body.id}`)).body.rawBody).toBe(body);
  });
});
