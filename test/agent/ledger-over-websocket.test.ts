import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { adminBody } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';
import { AgentProcess } from './support/agent-process.js';
import { FillsRefusingProxy } from './support/fills-refusing-proxy.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A server process, an account with a paper agent and a source; the agent's ticks hold EURUSD at 1.10500/1.10520. */
async function desk() {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-ledger-ws-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const env: Record<string, string> = {
    SIGNALGATE_DATA_DIR: path.join(dir, 'server'),
    SIGNALGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
  };
  if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
    const pg = await freshPostgresSchema('ledger_ws');
    cleanups.push(() => pg.drop());
    env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
  }
  const server: ServerProcess = await spawnServer(env);
  cleanups.push(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
    await server.exited;
  });
  const account = await adminBody(server.url, 'POST', '/api/admin/accounts', { name: 'Desk', monthlySignalQuota: 100 });
  const agent = await adminBody(server.url, 'POST', `/api/admin/accounts/${account.id}/agents`, { name: 'paper' });
  const source = await adminBody(server.url, 'POST', '/api/admin/sources', { accountId: account.id, name: 'alerts' });
  const ticks = path.join(dir, 'ticks.csv');
  writeFileSync(ticks, 'time,symbol,bid,ask\n2024-03-01T09:30:00Z,EURUSD,1.10500,1.10520\n');
  const startAgent = (url: string) => {
    const started = AgentProcess.start(url, agent.token, path.join(dir, 'agent'), ['--ticks', ticks]);
    cleanups.push(() => started.kill());
    return started;
  };
  const signal = (text: string) => fetch(`${server.url}/api/inbound/${source.authKey}`, { method: 'POST', body: text });
  const trades = async () =>
    (await adminBody(server.url, 'GET', `/api/admin/ledger/trades?accountId=${account.id}`)).trades as any[];
  /**
   * The server's access log lines for ledger reports over HTTP, once the log holds every request
   * answered so far: a request made now, its line read, comes after them (the log is written in order).
   */
  const fillsPosts = async () => {
    const mark = `/log-mark-${Math.random().toString(36).slice(2)}`;
    await fetch(server.url + mark);
    await waitUntil(() => server.stdout().includes(mark), 'the access log caught up');
    return server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { method?: string; url?: string; statusCode?: number })
      .filter((entry) => entry.method === 'POST' && entry.url === '/api/agent/fills');
  };
  return { server, startAgent, signal, trades, fillsPosts };
}

describe('ledger reports over the WebSocket', () => {
  it('an agent connected over the WebSocket reports its fills on it: recorded once, no HTTP request for them', async () => {
    const d = await desk();
    const agent = d.startAgent(d.server.url);
    await agent.connected('websocket');
    expect((await d.signal('EURUSD,buy,vol=0.1')).status).toBe(202);
    await waitUntil(async () => (await d.trades()).length === 1, 'the fill in the ledger');
    // The paper account bought 0.1 lot at the ask.
    expect(await d.trades()).toMatchObject([{ side: 'long', lots: 0.1, entryPrice: 1.1052, exitAt: null }]);
    expect(await d.fillsPosts()).toEqual([]);
    expect(agent.lines().filter((l) => l.msg === 'the server refused the ledger report')).toEqual([]);
  });

  // No build of an older server runs here: the older server is the real one behind a proxy that
  // answers `fills` messages as the push session did before it knew them (FillsRefusingProxy).
  it('against a server that refuses the fills message, sends the report over HTTP at once, and the next ones too', async () => {
    const d = await desk();
    const proxy = await FillsRefusingProxy.start(d.server.url);
    cleanups.push(() => proxy.close());
    const agent = d.startAgent(proxy.url);
    await agent.connected('websocket');

    expect((await d.signal('EURUSD,buy,vol=0.1')).status).toBe(202);
    await waitUntil(async () => (await d.trades()).length === 1, 'the first fill in the ledger');
    expect(proxy.refusedFills).toBe(1);
    expect(await d.fillsPosts()).toMatchObject([{ statusCode: 200 }]);

    // The same connection: straight to HTTP, the WebSocket not asked again.
    expect((await d.signal('EURUSD,buy,vol=0.2')).status).toBe(202);
    await waitUntil(async () => (await d.trades()).length === 2, 'the second fill in the ledger');
    expect(proxy.refusedFills).toBe(1);
    expect(await d.fillsPosts()).toMatchObject([{ statusCode: 200 }, { statusCode: 200 }]);
    expect((await d.trades()).map((t) => t.lots).sort()).toEqual([0.1, 0.2]);
    expect(agent.lines().filter((l) => l.msg === 'the server refused the ledger report')).toEqual([]);
    expect(agent.lines().filter((l) => /ledger reports over HTTP only/.test(String(l.msg)))).toHaveLength(1);
  });
});
