import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { startTestServer } from '../support/start-test-server.js';
import { accountWithAgents, agentRequest, postSignal, sourceFor } from './support/delivery-setup.js';
import { RawSocket } from './support/raw-socket.js';

const ADMIN = 'deep-ack-admin-token-0123456789';
const AGENTS = 5;
/** About 10 KB: well within the body limit, and deep enough to overflow JSON.stringify's stack. */
const DEEP = 5_000;
const deepAckBody = `{"status":"executed","result":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A real server process on a fresh store of the kind under test: an escaped error would end it. */
async function start(): Promise<ServerProcess> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-deep-ack-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  const env: Record<string, string> = { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: ADMIN };
  if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
    const pg = await freshPostgresSchema('deepack');
    cleanups.push(() => pg.drop());
    env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
  }
  const server = await spawnServer(env);
  cleanups.push(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });
  return server;
}

/** `AGENTS` agents, each handed the one signal posted (the poll marks it delivered): answers their tokens, ids and the signal. */
async function signalHandedToAgents(url: string, take: 'poll' | 'none') {
  const account = await adminRequest(url, ADMIN, 'POST', '/api/admin/accounts', {
    name: 'Desk',
    monthlySignalQuota: 1000,
  });
  const agents: Array<{ id: string; token: string }> = [];
  for (let i = 0; i < AGENTS; i++) {
    const made = await adminRequest(url, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/agents`, {
      name: `a${i}`,
    });
    agents.push({ id: made.body.id, token: made.body.token });
  }
  const source = await adminRequest(url, ADMIN, 'POST', '/api/admin/sources', {
    accountId: account.body.id,
    name: 'alerts',
    agentIds: agents.map((a) => a.id),
  });
  const posted = await fetch(`${url}/api/inbound/${source.body.authKey}`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: 'EURUSD,buy',
  });
  expect(posted.status).toBe(202);
  const signalId = ((await posted.json()) as { id: string }).id;
  if (take === 'poll') {
    for (const agent of agents) {
      const res = await fetch(`${url}/api/agent/signals`, { headers: { authorization: `Bearer ${agent.token}` } });
      expect(((await res.json()) as { signals: Array<{ id: string }> }).signals.map((s) => s.id)).toEqual([signalId]);
    }
  }
  return { agents, signalId };
}

function ack(url: string, token: string, signalId: string, body: string) {
  return fetch(`${url}/api/agent/signals/${signalId}/ack`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body,
  }).then(async (res) => ({ status: res.status, body: (await res.json()) as any }));
}

/** The server process is still running and answering. */
async function stillServing(server: ServerProcess): Promise<void> {
  expect(server.child.exitCode, server.stdout() + server.stderr()).toBeNull();
  expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
}

async function deliveryStatuses(url: string, signalId: string): Promise<Record<string, string>> {
  const record = await adminRequest(url, ADMIN, 'GET', `/api/admin/signals/${signalId}`);
  return Object.fromEntries(
    (record.body.deliveries as Array<{ agentId: string; status: string }>).map((d) => [d.agentId, d.status]),
  );
}

describe('an acknowledgement whose result nests thousands of lists deep', () => {
  it('over HTTP: is refused with 400 naming result, while the acks sent with it are applied and the service keeps serving', async () => {
    const server = await start();
    const { agents, signalId } = await signalHandedToAgents(server.url, 'poll');
    const [deep, ...others] = agents;
    // Sent together, so on PostgreSQL they share one grouped write.
    const answers = await Promise.all([
      ack(server.url, deep!.token, signalId, deepAckBody),
      ...others.map((agent) => ack(server.url, agent.token, signalId, '{"status":"executed","result":{"ticket":1}}')),
    ]);
    expect(answers[0]).toMatchObject({
      status: 400,
      body: {
        code: 'INVALID_REQUEST',
        param: 'result',
        detail: expect.stringContaining('nested more than 64 levels deep'),
      },
    });
    for (const answer of answers.slice(1)) expect(answer.status).toBe(200);
    await stillServing(server);
    const statuses = await deliveryStatuses(server.url, signalId);
    expect(statuses[deep!.id]).toBe('delivered');
    for (const agent of others) expect(statuses[agent.id]).toBe('executed');
    // The refused agent acknowledges properly afterwards.
    expect((await ack(server.url, deep!.token, signalId, '{"status":"executed"}')).status).toBe(200);
    await stillServing(server);
  });

  it('over the WebSocket: is answered 400 naming result on a session that stays open, while the acks sent with it are applied', async () => {
    const server = await start();
    const { agents, signalId } = await signalHandedToAgents(server.url, 'none');
    const sockets = await Promise.all(agents.map((agent) => RawSocket.open(server.url, agent.token)));
    cleanups.push(() => sockets.forEach((socket) => socket.close()));
    for (const socket of sockets) expect((await socket.waitForSignals(1)).map((s) => s.id)).toEqual([signalId]);
    const [deep, ...others] = sockets;
    deep!.sendRaw(`{"type":"ack","ref":"deep","id":"${signalId}",${deepAckBody.slice(1)}`);
    const results = await Promise.all([
      deep!.next((m) => m.type === 'result'),
      ...others.map((socket) =>
        socket.request({ type: 'ack', id: signalId, status: 'executed', result: { ticket: 1 } }),
      ),
    ]);
    // Refused before it was read, so its ref could not be: answered in turn, with ref null.
    expect(results[0]).toMatchObject({ ref: null, status: 400, body: { code: 'INVALID_REQUEST', param: 'result' } });
    for (const result of results.slice(1)) expect(result.status).toBe(200);
    await stillServing(server);
    const statuses = await deliveryStatuses(server.url, signalId);
    expect(statuses[agents[0]!.id]).toBe('delivered');
    for (const agent of agents.slice(1)) expect(statuses[agent.id]).toBe('executed');
    // The same session goes on.
    expect(await deep!.request({ type: 'ack', id: signalId, status: 'executed' })).toMatchObject({ status: 200 });
    expect(deep!.closeCode).toBeNull();
  });
});

describe('a grouped write with one acknowledgement that cannot be written', () => {
  it('fails that acknowledgement alone: the others of the same turn are applied', async () => {
    const server = await startTestServer();
    cleanups.push(() => server.stop());
    const account = await accountWithAgents(server, ['a0', 'a1', 'a2', 'a3']);
    const { authKey } = await sourceFor(server, account.accountId, { agentIds: account.agents.map((a) => a.id) });
    const signalId = await postSignal(server.url, authKey, 'EURUSD,buy');
    for (const agent of account.agents)
      expect((await agentRequest(server.url, agent.token, 'GET', '/api/agent/signals')).body.signals).toHaveLength(1);
    // Past the HTTP and WebSocket checks, straight to the store, all in one turn: one group.
    const deep = JSON.parse(`${'['.repeat(DEEP)}${']'.repeat(DEEP)}`) as unknown;
    const now = new Date().toISOString();
    const outcomes = await Promise.allSettled(
      account.agents.map((agent, i) =>
        server.store.deliveries.ack(
          agent.id,
          signalId,
          { status: 'executed', message: null, result: i === 0 ? deep : { i } },
          now,
        ),
      ),
    );
    expect(outcomes[0]).toMatchObject({ status: 'rejected', reason: expect.any(RangeError) });
    for (const outcome of outcomes.slice(1))
      expect(outcome).toMatchObject({ status: 'fulfilled', value: { kind: 'acked' } });
    const deliveries = (await server.admin('GET', `/api/admin/signals/${signalId}`)).body.deliveries as Array<{
      agentId: string;
      status: string;
    }>;
    expect(Object.fromEntries(deliveries.map((d) => [d.agentId, d.status]))).toEqual({
      [account.agents[0]!.id]: 'delivered',
      ...Object.fromEntries(account.agents.slice(1).map((a) => [a.id, 'executed'])),
    });
  });
});
