import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema, type TestSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';

const ADMIN = 'hostile-bodies-admin-token-0123456789';
/** Modest, so both stores finish well under a minute; fast-check's seed is printed on a failure. */
const HTTP_RUNS = 150;
const WS_RUNS = 40;

/** A body as bytes, so it can hold what JSON.stringify never writes (invalid UTF-8, truncation). */
const encode = (text: string) => Buffer.from(text, 'utf8');
const nested = (depth: number, open = '[', close = ']') => open.repeat(depth) + close.repeat(depth);

/** The acknowledgement that ended the server: 10 KB, its result 5,000 lists deep. */
const DEEP_ACK = shortlyShown(encode(`{"status":"executed","result":${nested(5_000)}}`));

/** Hostile bodies: each arm is one kind of trouble, some of them wrapped in fields a route reads. */
const hostileBody: fc.Arbitrary<Buffer> = fc
  .oneof(
    fc.integer({ min: 65, max: 30_000 }).map((depth) => encode(`{"status":"executed","result":${nested(depth)}}`)),
    fc
      .integer({ min: 65, max: 20_000 })
      .map((depth) => encode(`{"name":${nested(depth, '{"a":', '}').replace(/\}+$/, (m) => '1' + m)}}`)),
    fc.integer({ min: 60, max: 70 }).map((depth) => encode(nested(depth))),
    fc.integer({ min: 9_000, max: 40_000 }).map((count) => encode(`{"positions":[${'0,'.repeat(count)}0]}`)),
    fc
      .integer({ min: 1_000, max: 12_000 })
      .map((count) => encode(`{${Array.from({ length: count }, (_, i) => `"${i}":0`).join(',')}}`)),
    fc
      .integer({ min: 1_000, max: 200_000 })
      .map((length) =>
        encode(JSON.stringify({ name: 'x'.repeat(length), status: 'failed', message: 'y'.repeat(length) })),
      ),
    fc.jsonValue({ maxDepth: 6 }).map((value) => encode(JSON.stringify(value))),
    fc
      .record({
        status: fc.jsonValue({ maxDepth: 2 }),
        name: fc.jsonValue({ maxDepth: 2 }),
        result: fc.jsonValue({ maxDepth: 3 }),
      })
      .map((value) => encode(JSON.stringify(value))),
    fc.uint8Array({ maxLength: 2_000 }).map((bytes) => Buffer.from(bytes)),
    fc
      .tuple(
        fc.string({ maxLength: 50 }),
        fc.uint8Array({ minLength: 1, maxLength: 4 }).map((b) => Buffer.from(b.map((x) => 0x80 | x))),
      )
      .map(([text, bad]) => Buffer.concat([encode(`{"name":"${text.replaceAll('"', '')}`), bad, encode('"}')])),
    fc.json().map((text) => encode(text.slice(0, Math.max(0, text.length - 1)))),
    fc
      .constantFrom(
        '',
        '{}',
        '[]',
        'null',
        '"x"',
        '{"__proto__":{"x":1}}',
        '{"constructor":{"prototype":{"x":1}}}',
        '{"a":1,"a":2}',
        '\uFEFF{}',
        '{"status":"executed"}',
      )
      .map(encode),
  )
  .map(shortlyShown);

/** A counterexample is printed as its size and first bytes, not as thousands of numbers. */
function shortlyShown(body: Buffer): Buffer {
  return Object.assign(body, {
    [fc.toStringMethod]: () => `<${body.length} bytes: ${JSON.stringify(body.subarray(0, 80).toString('latin1'))}…>`,
  });
}

const contentType = fc.constantFrom(
  'application/json',
  'application/json; charset=utf-8',
  'APPLICATION/JSON',
  'application/json; charset=latin1',
  'text/plain',
  'text/plain; charset=utf-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  'application/merge-patch+json',
  null,
);

interface Fixtures {
  accountId: string;
  agentId: string;
  agentToken: string;
  sourceId: string;
  authKey: string;
  signalId: string;
  cookie: string;
  /** A new signal, handed to the agent by a poll unless `poll` is false (a WebSocket session takes it then). */
  freshSignal: (poll: boolean) => Promise<string>;
}

type Auth = 'admin' | 'dashboard' | 'agent' | 'none';
interface Route {
  method: string;
  path: (f: Fixtures) => string | Promise<string>;
  auth: Auth[];
}

/**
 * Every route that takes a body and some that take none, with the credentials they take. Routes
 * that would delete or rotate a fixture are aimed at an id that does not exist: their bodies are
 * still read first.
 */
const ROUTES: Route[] = [
  { method: 'POST', path: () => '/api/admin/accounts', auth: ['admin', 'dashboard'] },
  { method: 'PATCH', path: (f) => `/api/admin/accounts/${f.accountId}`, auth: ['admin', 'dashboard'] },
  { method: 'POST', path: (f) => `/api/admin/accounts/${f.accountId}/agents`, auth: ['admin', 'dashboard'] },
  { method: 'POST', path: () => '/api/admin/sources', auth: ['admin', 'dashboard'] },
  { method: 'PATCH', path: (f) => `/api/admin/sources/${f.sourceId}`, auth: ['admin', 'dashboard'] },
  { method: 'DELETE', path: () => '/api/admin/sources/src_fuzz_missing', auth: ['admin', 'dashboard'] },
  { method: 'DELETE', path: () => '/api/admin/agents/agt_fuzz_missing', auth: ['admin', 'dashboard'] },
  { method: 'POST', path: () => '/api/admin/sources/src_fuzz_missing/rotate-key', auth: ['admin', 'dashboard'] },
  { method: 'POST', path: () => '/api/admin/agents/agt_fuzz_missing/rotate-token', auth: ['admin', 'dashboard'] },
  { method: 'POST', path: () => '/api/admin/check', auth: ['admin', 'dashboard'] },
  { method: 'GET', path: (f) => `/api/admin/signals/${f.signalId}`, auth: ['admin', 'dashboard'] },
  { method: 'GET', path: () => '/api/admin/accounts', auth: ['admin', 'dashboard'] },
  { method: 'POST', path: () => '/api/dashboard/session', auth: ['none', 'dashboard'] },
  { method: 'GET', path: () => '/api/dashboard/session', auth: ['dashboard'] },
  // A signal handed out and not yet acknowledged each time: the ack is then stored, not refused as a repeat.
  { method: 'POST', path: async (f) => `/api/agent/signals/${await f.freshSignal(true)}/ack`, auth: ['agent'] },
  { method: 'PUT', path: () => '/api/agent/state', auth: ['agent'] },
  { method: 'GET', path: () => '/api/agent/signals', auth: ['agent'] },
  { method: 'GET', path: () => '/api/agent', auth: ['agent'] },
  { method: 'POST', path: (f) => `/api/inbound/${f.authKey}`, auth: ['none'] },
  { method: 'PUT', path: (f) => `/api/inbound/${f.authKey}`, auth: ['none'] },
];

describe('hostile bodies on every authenticated route', () => {
  let server: ServerProcess;
  let fixtures: Fixtures;
  const cleanups: Array<() => Promise<void> | void> = [];

  beforeAll(async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-hostile-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: ADMIN };
    if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
      const pg: TestSchema = await freshPostgresSchema('hostile');
      cleanups.push(() => pg.drop());
      env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
    }
    server = await spawnServer(env);
    cleanups.push(async () => {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    });
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', {
      name: 'Desk',
      monthlySignalQuota: 100_000,
    });
    const agent = await adminRequest(server.url, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/agents`, {
      name: 'mt5',
    });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'alerts',
      agentIds: [agent.body.id],
    });
    const posted = await fetch(`${server.url}/api/inbound/${source.body.authKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'EURUSD,buy',
    });
    const signalId = ((await posted.json()) as { id: string }).id;
    await fetch(`${server.url}/api/agent/signals`, { headers: { authorization: `Bearer ${agent.body.token}` } });
    const freshSignal = async (poll: boolean) => {
      const res = await fetch(`${server.url}/api/inbound/${source.body.authKey}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'EURUSD,sell',
      });
      const id = ((await res.json()) as { id: string }).id;
      if (poll)
        await (
          await fetch(`${server.url}/api/agent/signals`, { headers: { authorization: `Bearer ${agent.body.token}` } })
        ).text();
      return id;
    };
    const signIn = await fetch(`${server.url}/api/dashboard/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', origin: server.url },
      body: JSON.stringify({ token: ADMIN }),
    });
    expect(signIn.status).toBe(201);
    const cookie = signIn.headers.getSetCookie()[0]!.split(';')[0]!;
    fixtures = {
      accountId: account.body.id,
      agentId: agent.body.id,
      agentToken: agent.body.token,
      sourceId: source.body.id,
      authKey: source.body.authKey,
      signalId,
      cookie,
      freshSignal,
    };
  });
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  function headersFor(auth: Auth, type: string | null): Record<string, string> {
    const headers: Record<string, string> = type === null ? {} : { 'content-type': type };
    if (auth === 'admin') headers.authorization = `Bearer ${ADMIN}`;
    if (auth === 'agent') headers.authorization = `Bearer ${fixtures.agentToken}`;
    if (auth === 'dashboard') Object.assign(headers, { cookie: fixtures.cookie, origin: server.url });
    return headers;
  }

  async function stillServing(): Promise<void> {
    expect(server.child.exitCode, server.stderr()).toBeNull();
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    const res = await fetch(`${server.url}/api/admin/accounts/${fixtures.accountId}`, {
      headers: { authorization: `Bearer ${ADMIN}` },
    });
    expect(res.status).toBe(200);
  }

  it('over HTTP: never a 5xx, never an exit, and the server answers afterwards', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES).chain((route) => fc.tuple(fc.constant(route), fc.constantFrom(...route.auth))),
        hostileBody,
        contentType,
        async ([route, auth], body, type) => {
          const url = await route.path(fixtures);
          const res = await fetch(server.url + url, {
            method: route.method,
            headers: headersFor(auth, type),
            ...(route.method === 'GET' ? {} : { body }),
          });
          const text = await res.text();
          expect(
            res.status,
            `${route.method} ${url} (${type}, ${body.length} bytes): ${text.slice(0, 300)}`,
          ).toBeLessThan(500);
          if (res.status >= 400 && text.length > 0)
            expect(JSON.parse(text)).toMatchObject({ code: expect.any(String), detail: expect.any(String) });
        },
      ),
      {
        numRuns: HTTP_RUNS,
        // Every route meets the body that ended the server at least once, whatever the seed.
        examples: ROUTES.map((route): [[Route, Auth], Buffer, string | null] => [
          [route, route.auth[0]!],
          DEEP_ACK,
          'application/json',
        ]),
      },
    );
    await stillServing();
  });

  it('over the WebSocket: every message is answered below 500 or the session closed with a code saying why, and the server answers afterwards', async () => {
    await fc.assert(
      fc.asyncProperty(hostileBody, fc.boolean(), async (body, asAck) => {
        const signalId = asAck ? await fixtures.freshSignal(false) : fixtures.signalId;
        const ws = new WebSocket(`${server.url.replace('http', 'ws')}/api/agent/ws`, {
          headers: { authorization: `Bearer ${fixtures.agentToken}` },
        });
        const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
        let greeted: () => void = () => undefined;
        let delivered: () => void = () => undefined;
        const pushed = new Promise<void>((resolve) => (delivered = resolve));
        const hello = new Promise<void>((resolve) => (greeted = resolve));
        const result = new Promise<{ status: number }>((resolve) =>
          ws.on('message', (data) => {
            const message = JSON.parse(data.toString()) as { type: string; status: number };
            if (message.type === 'hello') greeted();
            if (message.type === 'signals') delivered();
            if (message.type === 'result') resolve(message);
          }),
        );
        ws.once('error', () => undefined);
        // Sent after the greeting, as the protocol asks: the session reads nothing before it.
        expect(await Promise.race([hello.then(() => 'hello'), closed.then((code) => `closed ${code}`)])).toBe('hello');
        // As an ack of the signal (its fields beside type and id), or as the message itself.
        const text = body.toString('utf8');
        const message =
          asAck && text.startsWith('{') && text.length > 2
            ? Buffer.concat([encode(`{"type":"ack","id":"${signalId}",`), body.subarray(1)])
            : body;
        // Acknowledged once it is handed out on this session: only then would it be stored.
        if (asAck) await pushed;
        ws.send(message, { binary: false });
        const answered = await Promise.race([
          closed.then((code) => ({ code })),
          result.then((answer) => ({ result: answer })),
          new Promise<never>((_, reject) =>
            setTimeout(
              () => reject(new Error(`no answer within 10 s to a message of ${message.length} bytes`)),
              10_000,
            ).unref(),
          ),
        ]);
        if ('result' in answered) expect(answered.result.status).toBeLessThan(500);
        // 1007: not UTF-8 (ws checks text frames); 1009: over 64 KiB.
        else expect([1007, 1009]).toContain(answered.code);
        ws.close();
        await closed;
      }),
      { numRuns: WS_RUNS, examples: [[DEEP_ACK, true]] },
    );
    await stillServing();
  });
});
