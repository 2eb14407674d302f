import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ONE_BUFFER_FROM_CHARACTERS } from '../../src/admin/json-page-body.js';
import { refusedRawBody } from '../../src/inbound/refusal-record.js';
import type { SignalFilter } from '../../src/store/store.js';
import { accountWithAgents, agentRequest, postSignal } from '../delivery/support/delivery-setup.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/start-test-server.js';

/**
 * The signal log's pages are written as JSON text from the stored entries, the normalized
 * signal embedded as stored, and a long page is encoded to UTF-8 entry by entry. What they
 * answer must stay, byte for byte, what `JSON.stringify` writes of the log's records (what the
 * route answered before): the same keys in the same order, the same escapes, the same numbers.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.stop();
});

/** A record's keys, in the order the API has always written them. */
const RECORD_KEYS = [
  'id',
  'sourceId',
  'accountId',
  'receivedAt',
  'status',
  'httpStatus',
  'code',
  'detail',
  'param',
  'errors',
  'contentType',
  'rawBody',
  'signal',
  'idempotencyKey',
  'quota',
  'duplicateOf',
  'outcome',
];
const AWKWARD = 'he said "hi" \\ back\\slash / é ü 中文 😀';

describe('a page of the signal log', () => {
  it("answers JSON.stringify's text of the log's records, byte for byte, on every filter", async () => {
    const { accountId, agents } = await accountWithAgents(server, ['a', 'b', 'c']);
    const made = await server.admin('POST', '/api/admin/sources', {
      accountId,
      name: 'Awkward "names" \\',
      duplicateWindowSeconds: 60,
    });
    expect(made.status).toBe(201);
    const source = { id: made.body.id as string, authKey: made.body.authKey as string };
    const inbound = (body: string, headers: Record<string, string>) =>
      fetch(`${server.url}/api/inbound/${source.authKey}`, { method: 'POST', headers, body });

    // Accepted, JSON with an awkward comment and an idempotency key; its duplicate; text ones.
    const jsonBody = JSON.stringify({
      symbol: 'EURUSD',
      action: 'buy',
      vol: 0.1,
      sl_pips: 20.5,
      tp1_pips: 12.25,
      comment: AWKWARD,
    });
    const first = await inbound(jsonBody, { 'content-type': 'application/json', 'idempotency-key': 'key-"1"-\\' });
    expect(first.status).toBe(202);
    const awkward = ((await first.json()) as { id: string }).id;
    expect((await inbound(jsonBody, { 'content-type': 'application/json' })).status).toBe(202); // the duplicate
    const plain = await postSignal(server.url, source.authKey, 'XAUUSD,sell,vol=0.25,sl_pips=15,comment=ünï');
    const third = await postSignal(server.url, source.authKey, 'GBPUSD,buy,vol=1');
    // Rejected: bodies with quotes, backslashes, control characters and non-ASCII text.
    for (const body of [
      'EURUSD,buy,sl="q\\é\u0001",vol=0,comment=😀\t\n',
      'not a signal at all \u2028 \u007f "\\"',
      '{"symbol":"EURUSD","action":"buy","vol":-1,"sl_pips":"a\\"b","comment":"x\u0002"}',
    ]) {
      expect(
        (await inbound(body, { 'content-type': body.startsWith('{') ? 'application/json' : 'text/plain' })).status,
      ).toBeGreaterThanOrEqual(400);
    }

    // Outcomes: every agent takes the signals; a executes the awkward one, b rejects it with a
    // message of its own, c leaves it delivered; a fails the plain one.
    for (const agent of agents)
      expect((await agentRequest(server.url, agent.token, 'GET', '/api/agent/signals')).status).toBe(200);
    const ack = async (agent: number, id: string, body: unknown) =>
      expect(
        (await agentRequest(server.url, agents[agent]!.token, 'POST', `/api/agent/signals/${id}/ack`, body)).status,
      ).toBe(200);
    await ack(0, awkward, { status: 'executed', message: AWKWARD, result: { price: 1.0845, note: '"x"' } });
    await ack(1, awkward, { status: 'rejected', message: 'no "margin" \\ left' });
    await ack(0, plain, { status: 'failed', message: 'broker offline' });

    const filters: [string, Omit<SignalFilter, 'limit'> & { limit?: number }][] = [
      [`sourceId=${source.id}&limit=500`, { sourceId: source.id, limit: 500 }],
      [`sourceId=${source.id}`, { sourceId: source.id }],
      [`sourceId=${source.id}&limit=2`, { sourceId: source.id, limit: 2 }],
      [`sourceId=${source.id}&limit=2&before=${third}`, { sourceId: source.id, limit: 2, before: third }],
      [`sourceId=${source.id}&status=rejected`, { sourceId: source.id, status: 'rejected' }],
      [`sourceId=${source.id}&status=duplicate`, { sourceId: source.id, status: 'duplicate' }],
      [`sourceId=${source.id}&outcome=rejected`, { sourceId: source.id, outcome: 'rejected' }],
      [`sourceId=${source.id}&symbol=xauusd`, { sourceId: source.id, symbol: 'XAUUSD' }],
      ['outcome=failed&limit=500', { outcome: 'failed', limit: 500 }],
      ['limit=500', { limit: 500 }],
    ];
    for (const [query, filter] of filters) {
      const res = await fetch(`${server.url}/api/admin/signals?${query}`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      const text = await res.text();
      expect(res.status, query).toBe(200);
      expect(res.headers.get('content-type'), query).toBe('application/json; charset=utf-8');
      expect(res.headers.get('content-length'), query).toBe(String(Buffer.byteLength(text)));
      // The records as the store reads them, written by JSON.stringify: the answer before.
      const page = await server.store.signals.list({ limit: 50, ...filter });
      expect(text, query).toBe(JSON.stringify({ signals: page.signals, next: page.next }));
      // And independently of the store's records: every key in its place, every value as JSON.stringify writes it.
      const parsed = JSON.parse(text) as { signals: Record<string, unknown>[]; next: string | null };
      for (const signal of parsed.signals) expect(Object.keys(signal), query).toEqual(RECORD_KEYS);
      expect(JSON.stringify(parsed), query).toBe(text);
    }

    const log = (
      JSON.parse(
        await (
          await fetch(`${server.url}/api/admin/signals?sourceId=${source.id}`, {
            headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
          })
        ).text(),
      ) as { signals: any[] }
    ).signals;
    expect(log.map((s) => s.status)).toEqual([
      'rejected',
      'rejected',
      'rejected',
      'accepted',
      'accepted',
      'duplicate',
      'accepted',
    ]);
    const byId = new Map(log.map((s) => [s.id, s]));
    expect(byId.get(awkward)).toMatchObject({
      rawBody: jsonBody,
      idempotencyKey: 'key-"1"-\\',
      signal: { comment: AWKWARD },
    });
    // An outcome lists its statuses alphabetically, as the grouped counts always answered them.
    expect(JSON.stringify(byId.get(awkward).outcome)).toBe('{"delivered":1,"executed":1,"rejected":1}');
    expect(JSON.stringify(byId.get(plain).outcome)).toBe('{"delivered":2,"failed":1}');
    expect(log[0].rawBody).toBe('{"symbol":"EURUSD","action":"buy","vol":-1,"sl_pips":"a\\"b","comment":"x\u0002"}');
    expect(log[2].errors.map((e: { code: string }) => e.code)).toEqual(['UNKNOWN_PARAMETER', 'INVALID_VOLUME']);
    expect(log[2].rawBody).toBe('EURUSD,buy,sl="q\\é\u0001",vol=0,comment=😀\t\n');
  });

  it('answers a long page, made as bytes rather than one string, with the same bytes as JSON.stringify', async () => {
    const { accountId } = await accountWithAgents(server, ['a']);
    const made = await server.admin('POST', '/api/admin/sources', { accountId, name: 'Long bodies' });
    expect(made.status).toBe(201);
    const source = { id: made.body.id as string, authKey: made.body.authKey as string };
    // Bodies of 2-, 3- and 4-byte characters and of what JSON escapes (quotes, backslashes,
    // control characters) or not (the line separators), ~10 KB each, refused: the log keeps the
    // first KiB of each, cut between characters, so a page of eighty is over the characters from
    // which a page is answered as bytes.
    const piece = `${AWKWARD} \u0001\t\n\u2028\u2029\u007f ½€𝄞 "q" \\ `;
    const bodies: string[] = [];
    for (let k = 0; k < 80; k++) bodies.push(`not a signal ${k} ${piece.repeat(120 + (k % 15))}`);
    for (const body of bodies) {
      expect(Buffer.byteLength(body)).toBeLessThan(16 * 1024);
      const res = await fetch(`${server.url}/api/inbound/${source.authKey}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body,
      });
      expect(res.status).toBeGreaterThanOrEqual(400);
    }
    const accepted = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1,comment=½€𝄞');

    // The long page and its older half from a cursor, both over the size answered as bytes, and
    // a page of one entry, under it.
    const long = `sourceId=${source.id}&limit=500`;
    const read = async (query: string) => {
      const res = await fetch(`${server.url}/api/admin/signals?${query}`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      return { res, bytes: Buffer.from(await res.arrayBuffer()) };
    };
    const newest = await server.store.signals.list({ sourceId: source.id, limit: 500 });
    for (const [query, filter, over] of [
      [long, { sourceId: source.id, limit: 500 }, true],
      [
        `sourceId=${source.id}&limit=500&before=${newest.signals[7]!.id}`,
        { sourceId: source.id, limit: 500, before: newest.signals[7]!.id },
        true,
      ],
      [`sourceId=${source.id}&limit=1`, { sourceId: source.id, limit: 1 }, false],
    ] as const) {
      const { res, bytes } = await read(query);
      expect(res.status, query).toBe(200);
      expect(res.headers.get('content-type'), query).toBe('application/json; charset=utf-8');
      expect(res.headers.get('content-length'), query).toBe(String(bytes.length));
      const page = await server.store.signals.list(filter);
      const expected = JSON.stringify({ signals: page.signals, next: page.next });
      expect(expected.length >= ONE_BUFFER_FROM_CHARACTERS, query).toBe(over);
      expect(bytes.equals(Buffer.from(expected)), query).toBe(true);
      expect(bytes.toString('utf8'), query).toBe(expected); // where they differ, when they do
    }
    // The long page holds every signal, each body as it was sent.
    const { bytes } = await read(long);
    const signals = (JSON.parse(bytes.toString('utf8')) as { signals: { id: string; rawBody: string }[] }).signals;
    expect(signals.map((s) => s.rawBody)).toEqual([
      'EURUSD,buy,vol=0.1,comment=½€𝄞',
      ...bodies.reverse().map((body) => refusedRawBody(Buffer.from(body), true)),
    ]);
    expect(signals[1]!.rawBody).toMatch(
      /^not a signal 79 .*…\[cut by signalgate: the first 10\d\d of \d+ bytes are kept\]$/s,
    );
    expect(signals[0]!.id).toBe(accepted);
  });

  it("one signal's outcome lists its statuses alphabetically, as its page does, whatever order its agents sort in", async () => {
    // Each agent executes one signal the other two leave delivered: whichever agent's id sorts
    // first, one of the three outcomes would list executed first if counted in agent order.
    const { accountId, agents } = await accountWithAgents(server, ['a', 'b', 'c']);
    const made = await server.admin('POST', '/api/admin/sources', { accountId, name: 'Three agents' });
    expect(made.status).toBe(201);
    const ids: string[] = [];
    for (const symbol of ['EURUSD', 'GBPUSD', 'USDJPY'])
      ids.push(await postSignal(server.url, made.body.authKey as string, `${symbol},buy,vol=0.1`));
    for (const agent of agents)
      expect((await agentRequest(server.url, agent.token, 'GET', '/api/agent/signals')).status).toBe(200);
    for (const [i, id] of ids.entries()) {
      expect(
        (
          await agentRequest(server.url, agents[i]!.token, 'POST', `/api/agent/signals/${id}/ack`, {
            status: 'executed',
          })
        ).status,
      ).toBe(200);
    }
    for (const id of ids) {
      const res = await fetch(`${server.url}/api/admin/signals/${id}`, {
        headers: { authorization: `Bearer ${TEST_ADMIN_TOKEN}` },
      });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text.slice(text.indexOf('"outcome":')), id).toMatch(/^"outcome":\{"delivered":2,"executed":1\}/);
    }
  });
});
