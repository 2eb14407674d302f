import { describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { useAgentTestBed } from './support/agent-test-bed.js';
import { HttpOnlyProxy } from './support/http-only-proxy.js';

describe('how the agent reaches the server', () => {
  const bed = useAgentTestBed();

  it('falls back to long-poll when the WebSocket cannot be set up (a proxy without WebSocket support)', async () => {
    const { server } = bed;
    const proxy = await HttpOnlyProxy.start(server.url);
    const { accountId, agents } = await accountWithAgents(server, ['behind-proxy']);
    const source = await sourceFor(server, accountId);
    const agentProcess = bed.startAgent(proxy.url, agents[0]!.token, bed.stateDir());
    try {
      await agentProcess.connected('long-poll');
      expect(agentProcess.lines().some((l) => l.msg === 'WebSocket unavailable; falling back to long-poll')).toBe(true);
      const id = await postSignal(server.url, source.authKey, 'EURUSD,buy');
      await waitUntil(
        async () => (await deliveriesOf(server, id))[0].status === 'executed',
        'the signal executed over long-poll',
      );
    } finally {
      // Killed here, not by the test bed after the test, so it is gone before its proxy closes.
      await agentProcess.kill();
      await proxy.close();
    }
  });

  it('exits with status 2 and says so when the server refuses the token', async () => {
    const agentProcess = bed.startAgent(bed.server.url, 'sga_wrong-token', bed.stateDir());
    const { code } = await agentProcess.exited;
    expect(code).toBe(2);
    expect(agentProcess.stderr).toContain('refused the agent token');
  });

  it('refuses to start with a bad flag, naming it', async () => {
    const badFlag = bed.startAgent(bed.server.url, 'sga_x', bed.stateDir(), ['--balance', '-5']);
    expect((await badFlag.exited).code).toBe(2);
    expect(badFlag.stderr).toContain('--balance must be a number above 0');
  });
});
