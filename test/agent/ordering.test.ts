import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { accountWithAgents, deliveriesOf, postSignal, sourceFor } from '../delivery/support/delivery-setup.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { AgentProcess } from './support/agent-process.js';

describe('queue order and exactly-once execution by a paper agent process', () => {
  let server: TestServer;
  const agents: AgentProcess[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.kill();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  afterAll(() => server.stop());

  /** Posts `count` signals one after another, opening and closing a position in turn. */
  async function postAlternating(authKey: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let i = 0; i < count; i++) ids.push(await postSignal(server.url, authKey, i % 2 === 0 ? 'EURUSD,buy,vol=0.01' : 'EURUSD,closebuy'));
    return ids;
  }

  async function run(count: number, transport: 'websocket' | 'long-poll') {
    const { accountId, agents: [agent] } = await accountWithAgents(server, ['paper']);
    const source = await sourceFor(server, accountId);
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-agent-'));
    dirs.push(dir);
    const process = AgentProcess.start(server.url, agent!.token, dir, ['--transport', transport, '--seed', '1']);
    agents.push(process);
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
    const { ids, agentId } = await run(1000, 'websocket');
    for (const id of ids) {
      const [delivery] = await deliveriesOf(server, id);
      expect(delivery).toMatchObject({ agentId, status: 'executed' });
    }
    const state = (await server.admin('GET', `/api/admin/agents/${agentId}`)).body.state;
    expect(state).toMatchObject({ currency: 'USD', positions: [] });
  }, 120_000);

  it('keeps the order over long-poll too', async () => {
    const { ids } = await run(100, 'long-poll');
    const statuses = await Promise.all(ids.map(async (id) => (await deliveriesOf(server, id))[0].status));
    expect(new Set(statuses)).toEqual(new Set(['executed']));
  }, 60_000);
});
