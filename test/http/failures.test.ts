import net from 'node:net';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import type { PostgresStore } from '../../src/store/postgres/postgres-store.js';
import { TEST_DATABASE_URL, terminateSessionWaitingFor } from '../support/postgres.js';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { post, seedSource } from '../support/seed-source.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

let server: TestServer | null = null;
afterEach(async () => {
  await server?.stop().catch(() => undefined);
  server = null;
});

describe('when things go wrong on the server side', () => {
  it('answers 500 INTERNAL_ERROR as a problem, acknowledging nothing, when the store fails', async () => {
    server = await startTestServer();
    const src = await seedSource(server);
    // On SQLite the inbound lane has a connection of its own; both are gone.
    await server.store.close();
    await server.inbound.close();
    const res = await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    expect(res.status).toBe(500);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.body).toMatchObject({ code: 'INTERNAL_ERROR', status: 500 });
    expect(res.body.detail).toMatch(/retry/);
  });

  it.skipIf(process.env.SIGNALGATE_TEST_STORE !== 'postgres')(
    'closes the connection unanswered when the PostgreSQL connection is lost during the commit, then goes on',
    async () => {
      server = await startTestServer();
      const src = await seedSource(server);
      const schema = (server.store as PostgresStore).schema!;
      const locker = new pg.Client({ connectionString: TEST_DATABASE_URL });
      await locker.connect();
      try {
        // The ingest call waits inside the database for this lock; its session is then terminated.
        await locker.query('BEGIN');
        await locker.query(`LOCK TABLE "${schema}".signals IN ACCESS EXCLUSIVE MODE`);
        const lost = post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' }).then(
          (res) => res.status,
          (error: unknown) => error,
        );
        await terminateSessionWaitingFor(`"${schema}".signals`);
        // Neither 202 nor 500 would be known to be true: no answer at all, as in a crash.
        expect(await lost).toBeInstanceOf(TypeError);
        await locker.query('ROLLBACK');
      } finally {
        await locker.end();
      }
      // The pool may still be replacing the lost connection: a 503 with Retry-After says so, and a
      // sender that honours it is answered 202 once the store is back.
      const inbound = server.url + src.inboundPath;
      const send = () => post(inbound, 'EURUSD,buy', { 'content-type': 'text/plain' });
      let next = await send();
      for (let retry = 0; next.status === 503 && retry < 10; retry++) {
        expect(next.body).toMatchObject({ code: 'STORE_UNAVAILABLE' });
        await new Promise((resolve) => setTimeout(resolve, 500));
        next = await send();
      }
      expect(next.status).toBe(202);
    },
  );

  it('finishes the request in flight when draining, then closes its connection', async () => {
    server = await startTestServer();
    const src = await seedSource(server);
    const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let answers = '';
    socket.on('data', (d) => (answers += d.toString()));
    const request = (body: string, extra = '') =>
      `POST ${src.inboundPath} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n${extra}\r\n${body}`;
    // Expect: 100-continue makes the server say when it has read the head: from then on the
    // request is in flight, however long the machine took to get there.
    const first = request('EURUSD,buy,vol=0.1', 'Expect: 100-continue\r\n');
    socket.write(first.slice(0, -4));
    await waitUntil(
      () => answers.startsWith('HTTP/1.1 100 Continue\r\n\r\n'),
      'the server to read the head of the first request',
    );
    const closing = server.close();
    // The drain has begun once the server stops listening (it marks itself draining first).
    await waitUntil(() => !server!.app.server.listening, 'the server to stop listening');
    // The rest of the first request and, pipelined behind it, a second one that is never read.
    socket.write(first.slice(-4) + request('GBPUSD,sell'));
    await closing;
    await new Promise((resolve) => (socket.destroyed ? resolve(null) : socket.once('close', resolve)));
    expect([...answers.matchAll(/^HTTP\/1\.1 (\d{3})/gm)].map((m) => Number(m[1]))).toEqual([100, 202]);
    expect(answers).toMatch(/^connection: close/im);
  });

  it('answers a request that reaches a draining server 503 SHUTTING_DOWN with Retry-After', async () => {
    server = await startTestServer();
    const src = await seedSource(server);
    const agent = await server.admin('POST', `/api/admin/accounts/${src.accountId}/agents`, { name: 'slow to close' });
    // An agent whose WebSocket never answers the close frame keeps the drain busy for a moment.
    const ws = net.connect(Number(new URL(server.url).port), '127.0.0.1');
    await new Promise((resolve) => ws.once('connect', resolve));
    ws.write(
      `GET /api/agent/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nAuthorization: Bearer ${agent.body.token}\r\n\r\n`,
    );
    let received = Buffer.alloc(0);
    ws.on('data', (chunk: Buffer) => (received = Buffer.concat([received, chunk])));
    await waitUntil(() => received.includes('\r\n\r\n'), 'the upgrade');
    const closing = server.close();
    // Its close frame says the drain has begun (the server marks itself draining before it
    // closes the sessions) and is waiting on this socket: sent then, not after a fixed pause
    // that a loaded machine may stretch past the wait for the close.
    await waitUntil(
      () => frameOpcodes(received.subarray(received.indexOf('\r\n\r\n') + 4)).includes(8),
      'the close frame',
    );
    const late = await post(server.url + src.inboundPath, 'EURUSD,buy', { 'content-type': 'text/plain' });
    expect(late.status).toBe(503);
    expect(late.body).toMatchObject({ code: 'SHUTTING_DOWN' });
    expect(late.headers.get('retry-after')).toBe('1');
    await closing;
    ws.destroy();
  });
});

describe('inbound headers', () => {
  it('refuses a malformed Idempotency-Key with 400 INVALID_REQUEST and records nothing against it', async () => {
    server = await startTestServer();
    const src = await seedSource(server);
    const res = await post(server.url + src.inboundPath, 'EURUSD,buy', {
      'content-type': 'text/plain',
      'idempotency-key': 'x'.repeat(256),
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'INVALID_REQUEST', param: 'Idempotency-Key' });
    const usage = await server.admin('GET', `/api/admin/accounts/${src.accountId}/usage`);
    expect(usage.body.used).toBe(0);
  });
});

/** The opcodes of the complete WebSocket frames (unmasked, as a server sends them) in `bytes`. */
function frameOpcodes(bytes: Buffer): number[] {
  const opcodes: number[] = [];
  let at = 0;
  while (at + 2 <= bytes.length) {
    let length = bytes[at + 1]! & 0x7f;
    let head = 2;
    if (length === 126) {
      if (at + 4 > bytes.length) break;
      length = bytes.readUInt16BE(at + 2);
      head = 4;
    } else if (length === 127) {
      if (at + 10 > bytes.length) break;
      length = Number(bytes.readBigUInt64BE(at + 2));
      head = 10;
    }
    if (at + head + length > bytes.length) break;
    opcodes.push(bytes[at]! & 0x0f);
    at += head + length;
  }
  return opcodes;
}
