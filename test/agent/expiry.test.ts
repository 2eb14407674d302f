import { describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { useAgentTestBed } from './support/agent-test-bed.js';

describe('a signal that outlives maxSignalAgeSeconds while the agent is offline', () => {
  const bed = useAgentTestBed();

  it('is marked expired and never reaches the agent, which executes the fresh ones', async () => {
    const { server } = bed;
    const { accountId, agents } = await accountWithAgents(server, ['paper']);
    const agent = agents[0]!;
    const source = await sourceFor(server, accountId, { maxSignalAgeSeconds: 1 });
    const stale = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.1');
    await new Promise((resolve) => setTimeout(resolve, 1300));

    const agentProcess = bed.startAgent(server.url, agent.token, bed.stateDir());
    await agentProcess.connected();
    // Its source's age raised first, once the stale one is marked expired (which a raise leaves
    // alone): with 1 s, the fresh one too could run out before the push reaches the agent on a
    // loaded machine.
    await waitUntil(
      async () => (await deliveriesOf(server, stale))[0].status === 'expired',
      'the stale signal marked expired',
    );
    expect((await server.admin('PATCH', `/api/admin/sources/${source.id}`, { maxSignalAgeSeconds: 3600 })).status).toBe(
      200,
    );
    const fresh = await postSignal(server.url, source.authKey, 'EURUSD,sell,vol=0.1');
    await agentProcess.waitForLog((l) => l.msg === 'signal handled' && l.signalId === fresh, 'the fresh signal');
    await waitUntil(async () => (await deliveriesOf(server, fresh))[0].status === 'executed', 'the ack');

    expect((await deliveriesOf(server, stale))[0]).toMatchObject({
      status: 'expired',
      deliveredAt: null,
      attempts: 0,
      ackedAt: null,
    });
    expect(agentProcess.lines().some((l) => l.signalId === stale)).toBe(false);
    expect(agentProcess.handled().map((l) => l.signalId)).toEqual([fresh]);
  });
});
