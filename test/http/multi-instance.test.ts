import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest, loggedSignalIds } from '../support/admin-client.js';
import { freshPostgresSchema, type TestSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

/** Several instances behind a load balancer on one PostgreSQL (issue: PostgreSQL store). */
const ADMIN = TEST_ADMIN_TOKEN;
const onPostgres = process.env.SIGNALGATE_TEST_STORE === 'postgres';

describe.runIf(onPostgres)('two instances on one PostgreSQL database', () => {
  let pg: TestSchema;
  let one: ServerProcess;
  let two: ServerProcess;
  let env: Record<string, string>;

  beforeAll(async () => {
    pg = await freshPostgresSchema('multi');
    env = { SIGNALGATE_DATABASE_URL: pg.urlWithSchema, SIGNALGATE_ADMIN_TOKEN: ADMIN };
    // Both start (and migrate) at once.
    [one, two] = await Promise.all([spawnServer(env), spawnServer(env)]);
  });
  afterAll(async () => {
    for (const server of [one, two]) {
      if (server && server.child.exitCode === null && server.child.signalCode === null) {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    }
    await pg?.drop();
  });

  function admin(server: ServerProcess, method: string, path: string, body?: unknown) {
    return adminRequest(server.url, ADMIN, method, path, body);
  }

  async function seed(quota: number) {
    const account = await admin(one, 'POST', '/api/admin/accounts', { name: 'Fund', monthlySignalQuota: quota });
    const agent = await admin(two, 'POST', `/api/admin/accounts/${account.body.id}/agents`, { name: 'mt5' });
    const source = await admin(two, 'POST', '/api/admin/sources', { accountId: account.body.id, name: 'tv' });
    return {
      accountId: account.body.id as string,
      sourceId: source.body.id as string,
      key: source.body.authKey as string,
      agentToken: agent.body.token as string,
    };
  }

  function send(server: ServerProcess, key: string, body: string, headers: Record<string, string> = {}) {
    return fetch(`${server.url}/api/inbound/${key}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', ...headers },
      body,
    });
  }

  it('keeps the quota exact: 400 concurrent requests over both against a quota of 100 give exactly 100 × 202', async () => {
    const src = await seed(100);
    const responses = await Promise.all(
      Array.from({ length: 400 }, (_, i) =>
        send(i % 2 === 0 ? one : two, src.key, `EURUSD,buy,vol=0.01,comment=r${i}`),
      ),
    );
    const statuses = responses.map((r) => r.status);
    await Promise.all(responses.map((r) => r.body?.cancel()));
    expect(statuses.filter((s) => s === 202)).toHaveLength(100);
    expect(statuses.filter((s) => s === 429)).toHaveLength(300);
    expect((await admin(two, 'GET', `/api/admin/accounts/${src.accountId}/usage`)).body).toMatchObject({
      used: 100,
      limit: 100,
    });
  });

  it('honours an Idempotency-Key whichever instance sees the repeat', async () => {
    const src = await seed(10);
    const headers = { 'idempotency-key': 'cross-1' };
    const [a, b] = await Promise.all([
      send(one, src.key, 'GBPUSD,sell', headers),
      send(two, src.key, 'GBPUSD,sell', headers),
    ]);
    const [bodyA, bodyB] = [(await a.json()) as any, (await b.json()) as any];
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(bodyB.id).toBe(bodyA.id);
    expect((await admin(one, 'GET', `/api/admin/accounts/${src.accountId}/usage`)).body.used).toBe(1);
  });

  it('hands a signal accepted by one instance to an agent long-polling the other', async () => {
    const src = await seed(10);
    const poll = fetch(`${one.url}/api/agent/signals?wait=20`, {
      headers: { authorization: `Bearer ${src.agentToken}` },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const accepted = (await (await send(two, src.key, 'USDJPY,buy,vol=0.3')).json()) as any;
    const polled = (await (await poll).json()) as any;
    expect(polled.signals.map((s: { id: string }) => s.id)).toEqual([accepted.id]);
    const ack = await fetch(`${two.url}/api/agent/signals/${accepted.id}/ack`, {
      method: 'POST',
      headers: { authorization: `Bearer ${src.agentToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'executed', message: 'filled' }),
    });
    expect(ack.status).toBe(200);
    const record = await admin(one, 'GET', `/api/admin/signals/${accepted.id}`);
    expect(record.body.deliveries[0]).toMatchObject({ status: 'executed', message: 'filled' });
  });

  it('loses no 202 when one instance is killed under load', async () => {
    const src = await seed(1_000_000);
    const accepted: string[] = [];
    let stop = false;
    const worker = async (server: ServerProcess, w: number) => {
      for (let i = 0; !stop && i < 3000; i++) {
        try {
          const res = await send(server, src.key, `EURUSD,sell,vol=0.01,comment=k${w}-${i}`);
          if (res.status === 202) accepted.push(((await res.json()) as { id: string }).id);
          else await res.body?.cancel();
        } catch {
          return;
        }
      }
    };
    const workers = Array.from({ length: 12 }, (_, w) => worker(w % 2 === 0 ? one : two, w));
    while (accepted.length < 200) await new Promise((resolve) => setTimeout(resolve, 20));
    one.child.kill('SIGKILL');
    await one.exited;
    await new Promise((resolve) => setTimeout(resolve, 200));
    stop = true;
    await Promise.all(workers);
    const logged = await loggedSignalIds(two.url, ADMIN, src.sourceId);
    expect(accepted.filter((id) => !logged.has(id))).toEqual([]);
  });
});
