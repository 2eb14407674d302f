import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema, TEST_DATABASE_URL, type TestSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { within } from '../support/within.js';
import { agentRequest, postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import { RawSocket } from '../delivery/support/raw-socket.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

/**
 * One agent, one receiver, across instances: with several instances on one PostgreSQL database,
 * an agent's WebSocket session on one instance refuses a second connection, polls and state
 * updates of that agent on every other instance, so two processes sharing a token never both
 * execute a signal.
 */
const ADMIN = TEST_ADMIN_TOKEN;
const onPostgres = process.env.SIGNALGATE_TEST_STORE === 'postgres';

/** A guard against a hang, not a deadline: each instance's answer may wait on another's database work on a loaded machine. */
const WAIT_MS = 20_000;

describe.runIf(onPostgres)('one WebSocket session per agent across instances on one PostgreSQL database', () => {
  let schema: TestSchema;
  let env: Record<string, string>;
  const servers: ServerProcess[] = [];

  beforeAll(async () => {
    schema = await freshPostgresSchema('sessions');
    env = { SIGNALGATE_DATABASE_URL: schema.urlWithSchema, SIGNALGATE_ADMIN_TOKEN: ADMIN };
    servers.push(...(await Promise.all([spawnServer(env), spawnServer(env)])));
  });
  afterAll(async () => {
    for (const server of servers) {
      if (server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    }
    await schema?.drop();
  });

  /** An account with one agent and a source routed to it, made through the given instance. */
  async function seed(server: ServerProcess) {
    const admin = (method: string, path: string, body?: unknown) => adminRequest(server.url, ADMIN, method, path, body);
    const account = await admin('POST', '/api/admin/accounts', { name: 'Fund', monthlySignalQuota: 1000 });
    const agent = await admin('POST', `/api/admin/accounts/${account.body.id}/agents`, { name: 'mt5' });
    const source = await admin('POST', '/api/admin/sources', { accountId: account.body.id, name: 'tv' });
    return { agentId: agent.body.id as string, token: agent.body.token as string, key: source.body.authKey as string };
  }

  it('refuses the second connection, polls and state updates on the other instance, and hands over once the session closes', async () => {
    const [one, two] = servers as [ServerProcess, ServerProcess];
    const agent = await seed(one);
    const first = await RawSocket.open(one.url, agent.token);
    await first.next((m) => m.type === 'hello');

    const second = await RawSocket.open(two.url, agent.token);
    expect(await within(second.closed, 'the second connection to be refused', WAIT_MS)).toBe(4409);
    expect(second.closeReason).toMatch(/^AGENT_CONNECTED/);
    expect(second.messages).toEqual([]);

    // A signal taken by either instance goes to the session only.
    const viaTwo = await postSignal(two.url, agent.key, 'EURUSD,buy');
    expect((await within(first.waitForSignals(1), 'the push on the first instance', WAIT_MS)).map((s) => s.id)).toEqual(
      [viaTwo],
    );
    const poll = await agentRequest(two.url, agent.token, 'GET', '/api/agent/signals');
    expect(poll).toMatchObject({ status: 409, body: { code: 'AGENT_CONNECTED' } });
    const state = await agentRequest(two.url, agent.token, 'PUT', '/api/agent/state', { balance: 1, positions: [] });
    expect(state).toMatchObject({ status: 409, body: { code: 'AGENT_CONNECTED' } });
    expect((await adminRequest(two.url, ADMIN, 'GET', `/api/admin/agents/${agent.agentId}`)).body.state).toBeNull();

    // A poll already waiting on the other instance when a signal comes takes nothing either.
    const waiting = agentRequest(two.url, agent.token, 'GET', '/api/agent/signals?wait=10');
    await new Promise((resolve) => setTimeout(resolve, 200));
    const later = await postSignal(one.url, agent.key, 'GBPUSD,sell');
    expect(await within(waiting, 'the waiting poll', WAIT_MS)).toMatchObject({
      status: 409,
      body: { code: 'AGENT_CONNECTED' },
    });
    expect((await within(first.waitForSignals(2), 'the second push', WAIT_MS)).map((s) => s.id)).toEqual([
      viaTwo,
      later,
    ]);

    // Closed, the session frees the agent everywhere: the other instance now takes a connection
    // and hands it what is still unacknowledged.
    first.close();
    await first.closed;
    let third: RawSocket | null = null;
    await waitUntil(async () => {
      const attempt = await RawSocket.open(two.url, agent.token);
      const hello = await Promise.race([
        attempt.next((m) => m.type === 'hello').then(() => true),
        attempt.closed.then(() => false),
      ]);
      if (hello) third = attempt;
      return hello;
    }, 'a connection to the other instance after the session closed');
    expect((await within(third!.waitForSignals(2), 'the hand-over', WAIT_MS)).map((s) => s.id)).toEqual([
      viaTwo,
      later,
    ]);
    third!.close();
    await third!.closed;
  });

  it('frees the agent at once when the instance holding its session is killed', async () => {
    const victim = await spawnServer(env);
    servers.push(victim);
    const [, two] = servers as [ServerProcess, ServerProcess];
    const agent = await seed(two);
    const first = await RawSocket.open(victim.url, agent.token);
    await first.next((m) => m.type === 'hello');
    expect((await agentRequest(two.url, agent.token, 'GET', '/api/agent/signals')).status).toBe(409);

    victim.child.kill('SIGKILL');
    await victim.exited;
    // PostgreSQL ends the dead process's connections, and with them its hold on the session.
    await waitUntil(
      async () => (await agentRequest(two.url, agent.token, 'GET', '/api/agent/signals')).status === 200,
      'polls to be accepted after the instance died',
    );
    const next = await RawSocket.open(two.url, agent.token);
    await within(
      next.next((m) => m.type === 'hello'),
      'the hello of a new session',
      WAIT_MS,
    );
    next.close();
    await next.closed;
  });

  it('closes a session whose hold broke (its database connection ended), so the agent can connect again', async () => {
    const [one, two] = servers as [ServerProcess, ServerProcess];
    const agent = await seed(one);
    const first = await RawSocket.open(one.url, agent.token);
    await first.next((m) => m.type === 'hello');

    const db = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await db.connect();
    try {
      const { rowCount } = await db.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [`signalgate-sessions ${schema.schema}`.slice(0, 63)],
      );
      expect(rowCount).toBeGreaterThan(0);
    } finally {
      await db.end();
    }
    expect(await within(first.closed, 'the session to close', WAIT_MS)).toBe(1011);

    const signal = await postSignal(two.url, agent.key, 'USDJPY,buy');
    const again = await RawSocket.open(one.url, agent.token);
    await within(
      again.next((m) => m.type === 'hello'),
      'a new session on the same instance',
      WAIT_MS,
    );
    expect((await within(again.waitForSignals(1), 'the push', WAIT_MS)).map((s) => s.id)).toEqual([signal]);
    expect((await agentRequest(two.url, agent.token, 'GET', '/api/agent/signals')).status).toBe(409);
    again.close();
    await again.closed;
  });
});
