import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  settledDeliveriesOf,
  sourceFor,
  type TestAgent,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { useAgentTestBed } from './support/agent-test-bed.js';
import { HttpOnlyProxy } from './support/http-only-proxy.js';

/**
 * An agent that executed a signal but whose ack never reached the server (the path failed),
 * killed with SIGKILL in that state: the server still counts the signal as unacknowledged.
 */
describe('an agent killed between executing a signal and its acknowledgement', () => {
  const bed = useAgentTestBed();
  let proxy: HttpOnlyProxy;

  // Registered after the test bed's hooks: the proxy starts once the server runs and, as
  // vitest runs after-hooks in reverse order, closes before the server stops.
  beforeAll(async () => {
    proxy = await HttpOnlyProxy.start(bed.server.url);
  });
  afterAll(() => proxy.close());

  const start = (url: string, agent: TestAgent, dir: string, args: string[] = []) =>
    bed.startAgent(url, agent.token, dir, ['--seed', '3', ...args]);

  /** Runs an agent through the proxy until it executed `text`, then kills it while its ack is refused. */
  async function executeThenKill(text: string) {
    const { server } = bed;
    const { accountId, agents } = await accountWithAgents(server, ['paper']);
    const agent = agents[0]!;
    const source = await sourceFor(server, accountId);
    const dir = bed.stateDir();
    proxy.refuseAcks = true;
    const first = start(proxy.url, agent, dir, ['--transport', 'long-poll']);
    await first.connected('long-poll');
    const id = await postSignal(server.url, source.authKey, text);
    const handled = await first.waitForLog(
      (l) => l.msg === 'signal handled' && l.signalId === id,
      'the signal executed',
    );
    // Logged once the outcome is on disk and the ack has failed.
    await first.waitForLog((l) => l.msg === 'ack not delivered yet; retrying' && l.signalId === id, 'a refused ack');
    await first.kill();
    proxy.refuseAcks = false;
    const [delivery] = await deliveriesOf(server, id);
    expect(delivery).toMatchObject({ status: 'delivered', ackedAt: null });
    return { agent, dir, id, handled, authKey: source.authKey, sourceId: source.id };
  }

  it("hands the signal out again: an agent without the first one's disk executes it", async () => {
    const { server } = bed;
    const { agent, id } = await executeThenKill('EURUSD,buy,vol=0.1');
    const second = start(server.url, agent, bed.stateDir());
    const handled = await second.waitForLog(
      (l) => l.msg === 'signal handled' && l.signalId === id,
      'the redelivered signal executed',
    );
    expect(handled.status).toBe('executed');
    const [delivery] = await settledDeliveriesOf(server, id, 'the ack');
    expect(delivery.status).toBe('executed');
    expect(delivery.attempts).toBeGreaterThanOrEqual(2);
  });

  it('does not execute it twice after a restart on the same disk: it acknowledges the stored outcome', async () => {
    const { server } = bed;
    const { agent, dir, id, handled, authKey } = await executeThenKill('EURUSD,buy,vol=0.1,comment=once');
    expect(handled.status).toBe('executed');
    // Acks still fail at first, so the signal is certainly handed out again to the restarted agent.
    proxy.refuseAcks = true;
    const restartedAt = new Date().toISOString();
    const restarted = start(proxy.url, agent, dir, ['--transport', 'long-poll']);
    await restarted.waitForLog(
      (l) => l.msg === 'paper account ready' && l.resumed === true && l.executed === 1,
      'the stored account',
    );
    await restarted.waitForLog(
      (l) => l.msg === 'signal already executed; acknowledging it again' && l.signalId === id,
      'the redelivery',
    );
    proxy.refuseAcks = false;
    const [delivery] = await settledDeliveriesOf(server, id, 'the ack of the stored outcome');
    expect(delivery).toMatchObject({ status: 'executed', message: handled.message });
    expect(restarted.handled().map((l) => l.signalId)).not.toContain(id);
    // One position on the account, not two: the state the restarted agent publishes says so (a
    // state published since the restart, read once: the first process may have published too).
    let published: any = null;
    await waitUntil(
      async () =>
        ((published = (await server.admin('GET', `/api/admin/agents/${agent.id}`)).body.state)?.updatedAt ?? '') >=
          restartedAt && published.positions.length > 0,
      'the state published by the restarted agent',
    );
    expect(published.positions.map((p: { comment: string }) => p.comment)).toEqual(['once']);

    // And the next signal is executed as usual on the same account.
    const next = await postSignal(server.url, authKey, 'EURUSD,closebuy');
    const closed = await restarted.waitForLog(
      (l) => l.msg === 'signal handled' && l.signalId === next,
      'the next signal',
    );
    expect(closed).toMatchObject({ status: 'executed', message: expect.stringMatching(/^closed position 1:/) });
  });

  it('settles the stored outcome even when the signal expired while the agent was down, so the log says it executed', async () => {
    const { server } = bed;
    const { agent, dir, id, handled, sourceId } = await executeThenKill('EURUSD,sell,vol=0.1');
    // Expired while the agent is down: its source's age lowered to 2 s now, which applies to the
    // unacknowledged delivery (a 2 s age from the start could run out before the first agent
    // even took the signal on a loaded machine).
    expect((await server.admin('PATCH', `/api/admin/sources/${sourceId}`, { maxSignalAgeSeconds: 2 })).status).toBe(
      200,
    );
    const [{ expiresAt }] = await deliveriesOf(server, id);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Date.parse(expiresAt) - Date.now()) + 200));
    const restarted = start(server.url, agent, dir);
    await waitUntil(
      async () => (await deliveriesOf(server, id))[0].status === 'executed',
      'the ack of the stored outcome',
    );
    expect((await deliveriesOf(server, id))[0]).toMatchObject({ status: 'executed', message: handled.message });
    expect(restarted.handled()).toEqual([]);
  });
});
