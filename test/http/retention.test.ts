import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema, type TestSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const ADMIN = TEST_ADMIN_TOKEN;
const RETENTION_SECONDS = 2;

/**
 * `SIGNALGATE_RETENTION` through a started server: signal records older than the retention are
 * deleted in the background once every delivery of theirs is final, while those still queued
 * or unacknowledged stay, and the month's usage keeps counting what was accepted.
 */
describe('retention', () => {
  let server: ServerProcess;
  let dataDir: string;
  let pg: TestSchema | null = null;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-retention-'));
    const env: Record<string, string> = {
      SIGNALGATE_DATA_DIR: dataDir,
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      SIGNALGATE_RETENTION: `${RETENTION_SECONDS}s`,
    };
    if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
      pg = await freshPostgresSchema('retention');
      env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
    }
    server = await spawnServer(env);
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null) server.child.kill('SIGTERM');
    await server?.exited;
    await pg?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const admin = (method: string, urlPath: string, body?: unknown) =>
    adminRequest(server.url, ADMIN, method, urlPath, body);

  /** A signal of an account of its own, accepted and acknowledged now: final, so pruned once older than the retention. */
  async function settledElsewhere(): Promise<string> {
    const account = (await admin('POST', '/api/admin/accounts', { name: 'Witness', monthlySignalQuota: 10 })).body;
    const agent = (await admin('POST', `/api/admin/accounts/${account.id}/agents`, { name: 'witness' })).body;
    const source = (await admin('POST', '/api/admin/sources', { accountId: account.id, name: 'witness' })).body;
    const res = await fetch(`${server.url}/api/inbound/${source.authKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'EURUSD,buy',
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const headers = { authorization: `Bearer ${agent.token}` };
    expect((await (await fetch(`${server.url}/api/agent/signals`, { headers })).json()) as unknown).toMatchObject({
      signals: [{ id }],
    });
    const ack = await fetch(`${server.url}/api/agent/signals/${id}/ack`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: '{"status":"executed"}',
    });
    expect(ack.status).toBe(200);
    return id;
  }

  it('deletes settled signals past the retention, keeps queued and unacknowledged ones, and keeps the usage count', async () => {
    const account = (await admin('POST', '/api/admin/accounts', { name: 'Desk', monthlySignalQuota: 100 })).body;
    const agent = (await admin('POST', `/api/admin/accounts/${account.id}/agents`, { name: 'paper' })).body;
    const source = (
      await admin('POST', '/api/admin/sources', { accountId: account.id, name: 'alerts', maxSignalAgeSeconds: 600 })
    ).body;
    const agentApi = (method: string, urlPath: string, body?: unknown) =>
      fetch(server.url + urlPath, {
        method,
        headers: {
          authorization: `Bearer ${agent.token}`,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    const post = async (text: string) => {
      const res = await fetch(`${server.url}/api/inbound/${source.authKey}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body: text,
      });
      expect(res.status).toBe(202);
      return ((await res.json()) as { id: string }).id;
    };

    const settled = [await post('EURUSD,buy'), await post('EURUSD,sell'), await post('GBPUSD,buy')];
    const unacked = await post('USDJPY,buy');
    const polled = (await (await agentApi('GET', '/api/agent/signals')).json()) as { signals: Array<{ id: string }> };
    expect(polled.signals.map((s) => s.id)).toEqual([...settled, unacked]);
    for (const id of settled)
      expect((await agentApi('POST', `/api/agent/signals/${id}/ack`, { status: 'executed' })).status).toBe(200);
    const queued = await post('AUDUSD,buy');
    const usage = (await admin('GET', `/api/admin/accounts/${account.id}/usage`)).body;
    expect(usage.used).toBe(5);

    // Deleted by the background rounds, with nothing asked of the server.
    const deadline = Date.now() + 30_000;
    for (;;) {
      const statuses = await Promise.all(
        settled.map(async (id) => (await admin('GET', `/api/admin/signals/${id}`)).status),
      );
      if (statuses.every((status) => status === 404)) break;
      if (Date.now() > deadline) throw new Error(`settled signals not pruned: ${statuses.join(',')}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    // Well past the retention, what is not final is still there, and still handed out. A round
    // has run since both were older than the retention, whatever the load: it deleted a settled
    // signal of another account accepted after them, once that too was older than the retention.
    const witness = await settledElsewhere();
    const deadlineWitness = Date.now() + 30_000;
    while ((await admin('GET', `/api/admin/signals/${witness}`)).status !== 404) {
      if (Date.now() > deadlineWitness) throw new Error('the later settled signal was not pruned');
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    expect((await admin('GET', `/api/admin/signals/${unacked}`)).body.deliveries[0]).toMatchObject({
      status: 'delivered',
    });
    expect((await admin('GET', `/api/admin/signals/${queued}`)).body.deliveries[0]).toMatchObject({ status: 'queued' });
    const again = (await (await agentApi('GET', '/api/agent/signals')).json()) as { signals: Array<{ id: string }> };
    expect(again.signals.map((s) => s.id)).toEqual([unacked, queued]);
    expect(
      (await admin('GET', `/api/admin/signals?sourceId=${source.id}`)).body.signals.map((s: { id: string }) => s.id),
    ).toEqual([queued, unacked]);
    // The month's count is kept apart from the log.
    expect((await admin('GET', `/api/admin/accounts/${account.id}/usage`)).body).toEqual(usage);
  });
});
