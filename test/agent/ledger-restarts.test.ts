import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { adminBody } from '../support/admin-client.js';
import { freePort } from '../support/free-port.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';
import { AgentProcess } from './support/agent-process.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A paper agent's fills reach the server's ledger through restarts of both: the server is down
 * when the take-profit fills, the agent is killed with that fill unsent, both come back, and the
 * ledger holds each fill once: one trade, opened and closed, with the engine's figures.
 */
describe('the ledger through restarts of the agent and the server', () => {
  it('a fill made while the server was down, the agent then killed, reaches the ledger once', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-ledger-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env: Record<string, string> = {
      SIGNALGATE_DATA_DIR: path.join(dataDir, 'server'),
      SIGNALGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN,
      PORT: String(await freePort()),
    };
    if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
      const pg = await freshPostgresSchema('ledger_restarts');
      cleanups.push(() => pg.drop());
      env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
    }
    const running: ServerProcess[] = [];
    const agents: AgentProcess[] = [];
    cleanups.push(async () => {
      for (const agent of agents) await agent.kill();
      for (const server of running) {
        if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
        await server.exited;
      }
    });
    const serve = async () => {
      const server = await spawnServer(env);
      running.push(server);
      return server;
    };
    // EURUSD at 1.10500/1.10520, then 8 s later at 1.10800/1.10820: past the take-profit.
    const ticks = path.join(dataDir, 'ticks.csv');
    writeFileSync(
      ticks,
      'time,symbol,bid,ask\n2024-03-01T09:30:00Z,EURUSD,1.10500,1.10520\n2024-03-01T09:30:08Z,EURUSD,1.10800,1.10820\n',
    );
    const agentDir = path.join(dataDir, 'agent');

    const first = await serve();
    const account = await adminBody(first.url, 'POST', '/api/admin/accounts', {
      name: 'Desk',
      monthlySignalQuota: 100,
    });
    const agent = await adminBody(first.url, 'POST', `/api/admin/accounts/${account.id}/agents`, { name: 'paper' });
    const source = await adminBody(first.url, 'POST', '/api/admin/sources', { accountId: account.id, name: 'alerts' });
    const startAgent = () => {
      const started = AgentProcess.start(first.url, agent.token, agentDir, ['--ticks', ticks]);
      agents.push(started);
      return started;
    };
    const one = startAgent();
    await one.connected();
    const accepted = await fetch(`${first.url}/api/inbound/${source.authKey}`, {
      method: 'POST',
      body: 'EURUSD,buy,vol=0.1,tp_pips=20,comment=breakout',
    });
    const { id } = (await accepted.json()) as { id: string };
    await one.waitForHandled(1);
    const trades = async (url: string) =>
      (await adminBody(url, 'GET', `/api/admin/ledger/trades?accountId=${account.id}`)).trades as any[];
    // The opening fill reaches the server while it runs.
    await waitUntil(async () => (await trades(first.url)).length === 1, 'the opening fill in the ledger');

    first.child.kill('SIGTERM');
    await first.exited;
    // The take-profit fills on the tick while the server is down: journaled, not sent.
    await one.waitForLog((l) => (l as any).event?.type === 'closed', 'the take-profit filled', 30_000);
    await one.kill();

    const second = await serve();
    const two = startAgent();
    await two.connected();
    await waitUntil(
      async () => (await trades(second.url)).some((t) => t.exitAt !== null),
      'the closing fill sent again',
    );
    const ledger = await trades(second.url);
    // Bought 0.1 lot at the ask 1.10520; the target (1.10720) was reached by a tick that gapped
    // past it, and the paper engine fills at that tick's bid, 1.10800 (docs/engine.md):
    // 0.1 lot × 100,000 units × (1.10800 − 1.10520) = 28.00 USD, no fees on paper.
    expect(ledger).toHaveLength(1);
    expect(ledger[0]).toMatchObject({
      side: 'long',
      lots: 0.1,
      entryPrice: 1.1052,
      exitPrice: 1.108,
      realizedProfit: 28,
      fees: 0,
      openingSignalId: id,
      closingSignalIds: [],
      strategy: 'breakout',
      sourceId: source.id,
      // The paper account's ask when the agent took the signal, which it filled at.
      quoteAtReceipt: 1.1052,
    });
    // Sent again by a third start, nothing is doubled.
    await two.kill();
    const three = startAgent();
    await three.connected();
    expect(await trades(second.url)).toEqual(ledger);
  });
});
