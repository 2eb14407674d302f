import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

const SLOW_CLIENTS = 200;

/** A raw connection to the server, with what it received and when the server closed it. */
function connect(url: string): Promise<{ socket: net.Socket; received: () => string; closed: Promise<number> }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => resolve({ socket, received: () => received, closed }));
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.on('error', reject);
    const closed = new Promise<number>((done) => socket.on('close', () => done(Date.now())));
  });
}

describe('slow and idle clients', () => {
  let server: TestServer;
  let inboundPath: string;

  beforeAll(async () => {
    server = await startTestServer();
    const account = await server.admin('POST', '/api/admin/accounts', { name: 'Ops', monthlySignalQuota: 1000 });
    const source = await server.admin('POST', '/api/admin/sources', { accountId: account.body.id, name: 'alerts' });
    inboundPath = `/api/inbound/${source.body.authKey}`;
  });
  afterAll(() => server.stop());

  it(`${SLOW_CLIENTS} connections sending a byte a second do not keep a signal from its 202, and are cut within seconds`, async () => {
    const slow = await Promise.all(Array.from({ length: SLOW_CLIENTS }, () => connect(server.url)));
    const openedAt = Date.now();
    for (const { socket } of slow) socket.write(`POST ${inboundPath} HTTP/1.1\r\nHost: x\r\nX-Slow: `);
    // One more header byte a second on each, for at most 30 s (the server should cut them long before).
    const drip = setInterval(() => {
      for (const { socket } of slow) if (!socket.destroyed) socket.write('a');
    }, 1000);
    try {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const sentAt = Date.now();
      const res = await fetch(server.url + inboundPath, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: 'EURUSD,buy,vol=0.1',
        signal: AbortSignal.timeout(3000),
      });
      expect(res.status).toBe(202);
      expect(Date.now() - sentAt).toBeLessThan(3000);

      const closedAt = await Promise.race([
        Promise.all(slow.map((c) => c.closed)),
        new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000)),
      ]);
      expect(closedAt, 'every slow connection closed by the server').not.toBeNull();
      // Headers are allowed 5 s, checked every second.
      expect(Math.max(...closedAt!) - openedAt).toBeLessThan(9_000);
      expect(slow[0]!.received()).toMatch(/^HTTP\/1\.1 408 /);
    } finally {
      clearInterval(drip);
      for (const { socket } of slow) socket.destroy();
    }
  }, 40_000);

  it('a body shorter than its Content-Length holds its connection at most seconds, and stores nothing', async () => {
    const before = (await server.admin('GET', '/api/admin/signals')).body.signals.length as number;
    const client = await connect(server.url);
    const openedAt = Date.now();
    client.socket.write(
      `POST ${inboundPath} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: 100\r\n\r\nEURUSD,buy`,
    );
    const closedAt = await Promise.race([
      client.closed,
      new Promise<null>((resolve) => setTimeout(() => resolve(null), 20_000)),
    ]);
    client.socket.destroy();
    expect(closedAt, 'closed by the server').not.toBeNull();
    // The whole request is allowed 10 s, checked every second.
    expect(closedAt! - openedAt).toBeLessThan(13_000);
    expect(client.received()).not.toContain('202');
    expect((await server.admin('GET', '/api/admin/signals')).body.signals.length).toBe(before);
  }, 30_000);
});
