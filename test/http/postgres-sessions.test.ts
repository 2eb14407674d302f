import net from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema, TEST_DATABASE_URL, type TestSchema } from '../support/postgres.js';
import { post } from '../support/seed-source.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const ADMIN = TEST_ADMIN_TOKEN;
const onPostgres = process.env.SIGNALGATE_TEST_STORE === 'postgres';

/** PostgreSQL restarts, failovers, idle-session timeouts and an operator's pg_terminate_backend. */
describe.runIf(onPostgres)('PostgreSQL sessions ended under load', () => {
  let schema: TestSchema;
  let server: ServerProcess;
  let applicationName: string;

  beforeAll(async () => {
    schema = await freshPostgresSchema('sessions');
    // Its own application name, so only this server's sessions are ended.
    applicationName = `sg_${schema.schema}`.slice(0, 60);
    const url = new URL(schema.urlWithSchema);
    url.searchParams.set('application_name', applicationName);
    server = await spawnServer({ SIGNALGATE_DATABASE_URL: url.toString(), SIGNALGATE_ADMIN_TOKEN: ADMIN });
  });
  afterAll(async () => {
    if (server && server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
    await schema?.drop();
  });

  it('leave the server running: requests in flight fail, later ones are stored', async () => {
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', {
      name: 'Fund',
      monthlySignalQuota: 1_000_000,
    });
    await adminRequest(server.url, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/agents`, { name: 'mt5' });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'tv',
    });
    const inbound = `${server.url}/api/inbound/${source.body.authKey}`;

    let sending = true;
    const loops = Array.from({ length: 12 }, async () => {
      while (sending) {
        await post(inbound, 'EURUSD,buy,vol=0.1', { 'content-type': 'text/plain' }).catch(() => undefined);
      }
    });
    const killer = new pg.Client({ connectionString: TEST_DATABASE_URL });
    await killer.connect();
    let ended = 0;
    try {
      for (let round = 0; round < 8; round++) {
        await new Promise((resolve) => setTimeout(resolve, 250));
        const { rows } = await killer.query<{ ended: boolean }>(
          'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1',
          [applicationName],
        );
        ended += rows.filter((row) => row.ended).length;
      }
    } finally {
      sending = false;
      await Promise.all(loops);
      await killer.end();
    }
    expect(ended).toBeGreaterThan(0);
    expect({ exitCode: server.child.exitCode, stderr: server.stderr() }).toEqual({ exitCode: null, stderr: '' });
    const after = await post(inbound, 'EURUSD,sell,vol=0.1', { 'content-type': 'text/plain' });
    expect(after.status).toBe(202);
  });
});

/** A TCP relay to PostgreSQL that can be cut and restored, as a network outage would. */
async function relayTo(
  target: URL,
): Promise<{ port: number; opened(): number; cut(): Promise<void>; restore(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  let server: net.Server;
  let port = 0;
  let opened = 0;
  const open = () =>
    new Promise<void>((resolve) => {
      server = net.createServer((client) => {
        const upstream = net.connect(Number(target.port || 5432), target.hostname);
        opened++;
        for (const socket of [client, upstream]) {
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream).pipe(client);
      });
      server.listen(port, '127.0.0.1', () => {
        port = (server.address() as net.AddressInfo).port;
        resolve();
      });
    });
  await open();
  return {
    port,
    /** Connections made through the relay so far. */
    opened: () => opened,
    cut: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
    restore: open,
  };
}

describe.runIf(onPostgres)('GET /readyz and /healthz with PostgreSQL out of reach', () => {
  it('readiness answers 503 failing while the database cannot be reached (why: only to the metrics token), and ready again once it can; liveness stays 200', async () => {
    const schema = await freshPostgresSchema('health');
    const relay = await relayTo(new URL(TEST_DATABASE_URL));
    const url = new URL(schema.urlWithSchema);
    url.host = `127.0.0.1:${relay.port}`;
    const server = await spawnServer({ SIGNALGATE_DATABASE_URL: url.toString(), SIGNALGATE_ADMIN_TOKEN: ADMIN });
    try {
      expect(await (await fetch(`${server.url}/readyz`)).json()).toEqual({ status: 'ready', store: 'postgres' });
      // Anyone may ask, as often as they like: the probes take one connection of their own,
      // never one of the pool that signals are stored through.
      const before = relay.opened();
      const answers = await Promise.all(
        Array.from({ length: 50 }, () => fetch(`${server.url}/readyz`).then((r) => r.status)),
      );
      expect(answers).toEqual(Array(50).fill(200));
      expect(relay.opened() - before).toBeLessThanOrEqual(1);
      await relay.cut();
      const down = await fetch(`${server.url}/readyz`);
      expect(down.status).toBe(503);
      const shown = (await down.json()) as { detail: string };
      expect(shown).toMatchObject({
        status: 'failing',
        store: 'postgres',
        detail: expect.stringContaining('recovers by itself'),
      });
      // The database's own error text is for the operator's token only.
      expect(shown.detail).not.toMatch(/PostgreSQL|ECONN|connect|terminated/);
      const told = await fetch(`${server.url}/readyz`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(told.status).toBe(503);
      expect(await told.json()).toMatchObject({ status: 'failing', detail: expect.stringContaining('PostgreSQL') });
      // The process still serves: a supervisor must not restart it for the database's outage.
      expect(await (await fetch(`${server.url}/healthz`)).json()).toEqual({ status: 'ok', store: 'postgres' });
      await relay.restore();
      const up = await fetch(`${server.url}/readyz`);
      expect(up.status).toBe(200);
    } finally {
      server.child.kill('SIGKILL');
      await server.exited;
      await relay.cut().catch(() => undefined);
      await schema.drop();
    }
  });
});
