import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  settledDeliveriesOf,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { useAgentTestBed } from './support/agent-test-bed.js';
import { HttpOnlyProxy } from './support/http-only-proxy.js';

describe('queue order and exactly-once execution by a paper agent process', () => {
  const bed = useAgentTestBed();
  let proxy: HttpOnlyProxy;

  // After the test bed's hooks: started once the server runs, closed before it stops.
  beforeAll(async () => {
    proxy = await HttpOnlyProxy.start(bed.server.url);
  });
  afterAll(() => proxy.close());

  /** Posts `count` signals one after another, opening and closing a position in turn. */
  async function postAlternating(authKey: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++)
      ids.push(await postSignal(bed.server.url, authKey, i % 2 === 0 ? 'EURUSD,buy,vol=0.01' : 'EURUSD,closebuy'));
    return ids;
  }

  async function run(count: number, transport: 'websocket' | 'long-poll') {
    const { server } = bed;
    const {
      accountId,
      agents: [agent],
    } = await accountWithAgents(server, ['paper']);
    const source = await sourceFor(server, accountId);
    const process = bed.startAgent(server.url, agent!.token, bed.stateDir(), ['--transport', transport, '--seed', '1']);
    await process.connected(transport);

    const ids = await postAlternating(source.authKey, count);
    await process.waitForHandled(count);
    const handled = process.handled();
    expect(handled.map((line) => line.signalId)).toEqual(ids);
    expect(handled.map((line) => line.seq)).toEqual(ids.map((_, i) => i + 1));
    expect(handled.every((line) => line.status === 'executed')).toBe(true);
    return { ids, agentId: agent!.id, process };
  }

  it('executes 1,000 signals over the WebSocket in the order they were accepted, each once', async () => {
    const { server } = bed;
    const { ids, agentId } = await run(1000, 'websocket');
    // Read 50 at a time rather than in 1,000 round trips one after another.
    for (let from = 0; from < ids.length; from += 50) {
      const records = await Promise.all(ids.slice(from, from + 50).map((id) => deliveriesOf(server, id)));
      for (const [delivery] of records) expect(delivery).toMatchObject({ agentId, status: 'executed' });
    }
    const state = (await server.admin('GET', `/api/admin/agents/${agentId}`)).body.state;
    expect(state).toMatchObject({ currency: 'USD', positions: [] });
    // What is checked is order and exactly-once, not speed: under load the run took 85 s of the
    // 120 s this had, so the bound is a generous guard; a stall fails sooner, in waitForHandled.
  }, 300_000);

  it('keeps the order over long-poll too', async () => {
    const { ids } = await run(100, 'long-poll');
    // The ack follows the "signal handled" line, without waiting: the last ones may still be on their way.
    const statuses = await Promise.all(
      ids.map(async (id) => (await settledDeliveriesOf(bed.server, id, `the ack of ${id}`))[0].status),
    );
    expect(new Set(statuses)).toEqual(new Set(['executed']));
  }, 180_000);

  it("carries out a poll's signals in order while their acks are still on the way, and each once", async () => {
    const { server } = bed;
    const {
      accountId,
      agents: [agent],
    } = await accountWithAgents(server, ['paper']);
    const source = await sourceFor(server, accountId);
    // Queued before the agent starts, so its first poll takes all three.
    const ids = await postAlternating(source.authKey, 3);
    proxy.holdAcks = true;
    const process = bed.startAgent(proxy.url, agent!.token, bed.stateDir(), [
      '--transport',
      'long-poll',
      '--seed',
      '1',
    ]);
    try {
      await process.waitForHandled(3);
      expect(process.handled().map((line) => line.signalId)).toEqual(ids);
      // None of the three acks has reached the server: each was executed without waiting for the one before.
      for (const id of ids) expect((await deliveriesOf(server, id))[0].status).toBe('delivered');
      // All three are on their way at once, none answered.
      await waitUntil(() => proxy.heldAcks >= 3, 'the three acks at the proxy');
    } finally {
      proxy.releaseAcks();
    }
    for (const id of ids) expect((await settledDeliveriesOf(server, id, 'the ack'))[0].status).toBe('executed');
    // Polling again after the acks hands out the next signal only: nothing executed twice.
    const next = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.01');
    await process.waitForHandled(4);
    expect(process.handled().map((line) => line.signalId)).toEqual([...ids, next]);
  }, 120_000);
});
