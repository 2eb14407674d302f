import { afterEach, describe, expect, it } from 'vitest';
import { startLoggedTestServer, type LoggedTestServer } from '../support/logged-test-server.js';
import { post, seedSource } from '../support/seed-source.js';

/** The client address the access line of each request to `path` gave, in order. */
function loggedAddresses(server: LoggedTestServer, urlStart: string): unknown[] {
  return server
    .logLines()
    .filter((line) => line.msg === 'request' && String(line.url).startsWith(urlStart))
    .map((line) => line.clientAddress);
}

async function waitForLines(server: LoggedTestServer, urlStart: string, count: number): Promise<unknown[]> {
  // Each line is written once its answer is done, not necessarily before the client has it.
  for (const deadline = Date.now() + 20_000; loggedAddresses(server, urlStart).length < count && Date.now() < deadline;)
    await new Promise((r) => setTimeout(r, 20));
  return loggedAddresses(server, urlStart);
}

describe('the client address (SIGNALGATE_TRUST_PROXY)', () => {
  let server: LoggedTestServer | undefined;
  afterEach(async () => {
    await server?.stop();
    server = undefined;
  });

  it('without trusted proxies is the socket’s: an X-Forwarded-For header is not believed', async () => {
    server = await startLoggedTestServer();
    const { inboundPath } = await seedSource(server);
    expect((await post(`${server.url}${inboundPath}`, 'EURUSD,buy', { 'x-forwarded-for': '203.0.113.9' })).status).toBe(
      202,
    );
    await post(`${server.url}${inboundPath}`, 'EURUSD,buy', { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' });
    expect(await waitForLines(server, '/api/inbound/', 2)).toEqual(['127.0.0.1', '127.0.0.1']);
  });

  it('from a trusted proxy is the right-most address in X-Forwarded-For that is not a trusted proxy', async () => {
    server = await startLoggedTestServer({ trustProxy: ['127.0.0.1', '10.0.0.0/8'] });
    const { inboundPath } = await seedSource(server);
    const url = `${server.url}${inboundPath}`;
    // What a client wrote itself stands left of what the proxy appended, and is not believed.
    expect((await post(url, 'EURUSD,buy', { 'x-forwarded-for': '198.51.100.1, 203.0.113.9' })).status).toBe(202);
    // Hops through further trusted proxies are skipped.
    await post(url, 'EURUSD,buy', { 'x-forwarded-for': '203.0.113.10, 10.1.2.3, 127.0.0.1' });
    await post(url, 'EURUSD,buy', { 'x-forwarded-for': '2001:db8::7' });
    // No header: the proxy's own address.
    await post(url, 'EURUSD,buy');
    expect(await waitForLines(server, '/api/inbound/', 4)).toEqual([
      '203.0.113.9',
      '203.0.113.10',
      '2001:db8::7',
      '127.0.0.1',
    ]);
    // Routed requests (the admin API) get the same.
    await fetch(`${server.url}/healthz`, { headers: { 'x-forwarded-for': '203.0.113.11' } });
    expect(await waitForLines(server, '/healthz', 1)).toEqual(['203.0.113.11']);
  });

  it('from a peer that is not a trusted proxy is that peer, whatever X-Forwarded-For says', async () => {
    server = await startLoggedTestServer({ trustProxy: ['10.0.0.0/8'] });
    const { inboundPath } = await seedSource(server);
    await post(`${server.url}${inboundPath}`, 'EURUSD,buy', { 'x-forwarded-for': '203.0.113.9' });
    expect(await waitForLines(server, '/api/inbound/', 1)).toEqual(['127.0.0.1']);
  });
});
