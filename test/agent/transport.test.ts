import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { accountWithAgents, deliveriesOf, postSignal, sourceFor, waitUntil } from '../delivery/support/delivery-setup.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { AgentProcess } from './support/agent-process.js';
import { HttpOnlyProxy } from './support/http-only-proxy.js';

describe('how the agent reaches the server', () => {
  let server: TestServer;
  let dir: string;

  beforeAll(async () => {
    server = await startTestServer();
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-agent-'));
  });
  afterAll(async () => {
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('falls back to long-poll when the WebSocket cannot be set up (a proxy without WebSocket support)', async () => {
    const proxy = await HttpOnlyProxy.start(server.url);
    const { accountId, agents } = await accountWithAgents(server, ['behind-proxy']);
    const source = await sourceFor(server, accountId);
    const agentProcess = AgentProcess.start(proxy.url, agents[0]!.token, path.join(dir, 'proxied'));
    try {
      await agentProcess.connected('long-poll');
      expect(agentProcess.lines().some((l) => l.msg === 'WebSocket unavailable; falling back to long-poll')).toBe(true);
      const id = await postSignal(server.url, source.authKey, 'EURUSD,buy');
      await waitUntil(async () => (await deliveriesOf(server, id))[0].status === 'executed', 'the signal executed over long-poll');
    } finally {
      await agentProcess.kill();
      await proxy.close();
    }
  });

  it('exits with status 2 and says so when the server refuses the token', async () => {
    const agentProcess = AgentProcess.start(server.url, 'sga_wrong-token', path.join(dir, 'wrong'));
    const { code } = await agentProcess.exited;
    expect(code).toBe(2);
    expect(agentProcess.stderr).toContain('refused the agent token');
  });

  it('refuses to start with a bad flag, naming it', async () => {
    const badFlag = AgentProcess.start(server.url, 'sga_x', dir, ['--balance', '-5']);
    expect((await badFlag.exited).code).toBe(2);
    expect(badFlag.stderr).toContain('--balance must be a number above 0');
  });
});
