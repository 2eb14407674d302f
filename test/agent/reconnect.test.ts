import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { adminBody } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { AgentProcess } from './support/agent-process.js';
import { freePort } from '../support/free-port.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const ADMIN = TEST_ADMIN_TOKEN;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

describe('an agent whose server goes away', () => {
  it('reconnects when the server is back, and executes what was accepted meanwhile', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-reconnect-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = {
      SIGNALGATE_DATA_DIR: dataDir,
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      PORT: String(await freePort()),
    };
    if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
      const pg = await freshPostgresSchema('reconnect');
      cleanups.push(() => pg.drop());
      env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
    }
    const running: ServerProcess[] = [];
    const serve = async () => {
      const server = await spawnServer(env);
      running.push(server);
      return server;
    };
    cleanups.push(async () => {
      for (const server of running) {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
        await server.exited;
      }
    });

    const first = await serve();
    const account = await adminBody(first.url, 'POST', '/api/admin/accounts', { name: 'Ops', monthlySignalQuota: 100 });
    const agent = await adminBody(first.url, 'POST', `/api/admin/accounts/${account.id}/agents`, { name: 'paper' });
    const source = await adminBody(first.url, 'POST', '/api/admin/sources', { accountId: account.id, name: 'alerts' });
    const agentProcess = AgentProcess.start(first.url, agent.token, path.join(dataDir, 'agent'));
    cleanups.push(() => agentProcess.kill());
    await agentProcess.connected('websocket');

    // SIGTERM drains: the agent's socket is closed with 1001 instead of holding the server up.
    first.child.kill('SIGTERM');
    expect((await first.exited).code).toBe(0);
    await agentProcess.waitForLog((l) => l.msg === 'disconnected; reconnecting', 'the disconnect');

    const second = await serve();
    const accepted = await fetch(`${second.url}/api/inbound/${source.authKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'EURUSD,buy',
    });
    expect(accepted.status).toBe(202);
    const { id } = (await accepted.json()) as { id: string };
    await agentProcess.waitForLog(
      (l) => l.msg === 'signal handled' && l.signalId === id,
      'the signal after reconnecting',
    );
    expect(agentProcess.lines().filter((l) => l.msg === 'connected').length).toBeGreaterThanOrEqual(2);
    const delivery = async () => (await adminBody(second.url, 'GET', `/api/admin/signals/${id}`)).deliveries[0];
    await waitUntil(async () => (await delivery()).status === 'executed', 'the ack');
    expect(await delivery()).toMatchObject({ agentId: agent.id, status: 'executed' });
  });
});
