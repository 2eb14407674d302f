import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import {
  accountWithAgents,
  agentRequest,
  deliveriesOf,
  postSignal,
  sourceFor,
  type TestAgent,
} from './support/delivery-setup.js';

describe('routing and fan-out', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(() => server.stop());

  const idsFor = async (agent: TestAgent) =>
    (
      (await agentRequest(server.url, agent.token, 'GET', '/api/agent/signals')).body.signals as Array<{ id: string }>
    ).map((s) => s.id);

  it("queues a signal for the source's agentIds only, or for every agent of the account; never for another account's agents", async () => {
    const mine = await accountWithAgents(server, ['mt5-live', 'mt5-demo', 'ctrader']);
    const [live, demo, ctrader] = mine.agents as [TestAgent, TestAgent, TestAgent];
    const other = await accountWithAgents(server, ['stranger']);
    const stranger = other.agents[0]!;
    await sourceFor(server, other.accountId);

    const routed = await sourceFor(server, mine.accountId, { agentIds: [live.id, ctrader.id] });
    const everyone = await sourceFor(server, mine.accountId);
    const toTwo = await postSignal(server.url, routed.authKey, 'EURUSD,buy');
    const toAll = await postSignal(server.url, everyone.authKey, 'GBPUSD,sell');

    expect(await idsFor(live)).toEqual([toTwo, toAll]);
    expect(await idsFor(demo)).toEqual([toAll]);
    expect(await idsFor(ctrader)).toEqual([toTwo, toAll]);
    expect(await idsFor(stranger)).toEqual([]);

    expect((await deliveriesOf(server, toTwo)).map((d) => d.agentId).sort()).toEqual([live.id, ctrader.id].sort());
    expect((await deliveriesOf(server, toAll)).map((d) => d.agentId).sort()).toEqual(
      [live.id, demo.id, ctrader.id].sort(),
    );
  });

  it("keeps each agent's queue and acknowledgements apart", async () => {
    const { accountId, agents } = await accountWithAgents(server, ['a', 'b']);
    const [a, b] = agents as [TestAgent, TestAgent];
    const source = await sourceFor(server, accountId);
    const id = await postSignal(server.url, source.authKey, 'USDJPY,buy');
    expect(await idsFor(a)).toEqual([id]);
    expect(
      (await agentRequest(server.url, a.token, 'POST', `/api/agent/signals/${id}/ack`, { status: 'executed' })).status,
    ).toBe(200);
    // b has not acknowledged: its copy is still pending, and b may reject where a executed.
    expect(await idsFor(b)).toEqual([id]);
    expect(
      (
        await agentRequest(server.url, b.token, 'POST', `/api/agent/signals/${id}/ack`, {
          status: 'rejected',
          message: 'market closed',
        })
      ).status,
    ).toBe(200);
    const byAgent = Object.fromEntries((await deliveriesOf(server, id)).map((d) => [d.agentId, d.status]));
    expect(byAgent).toEqual({ [a.id]: 'executed', [b.id]: 'rejected' });
  });
});
