import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminRequest, loggedSignalIds } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { sign } from '../support/seed-source.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';

const ADMIN = 'process-test-admin-token-abcdef';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** The environment of a server process on a fresh store of the kind under test. */
async function storeEnv(): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-proc-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  if (process.env.SIGNALGATE_TEST_STORE !== 'postgres') return { SIGNALGATE_DATA_DIR: dataDir };
  const pg = await freshPostgresSchema();
  cleanups.push(() => pg.drop());
  return { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_DATABASE_URL: pg.urlWithSchema };
}

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer(env);
  cleanups.push(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });
  return server;
}

function admin(url: string, method: string, urlPath: string, body?: unknown, token = ADMIN) {
  return adminRequest(url, token, method, urlPath, body);
}

async function seed(url: string, quota: number, hmacSecret?: string) {
  const account = await admin(url, 'POST', '/api/admin/accounts', { name: 'Ops', monthlySignalQuota: quota });
  const source = await admin(url, 'POST', '/api/admin/sources', {
    accountId: account.body.id,
    name: 'alerts',
    ...(hmacSecret && { hmacSecret }),
  });
  return { accountId: account.body.id as string, sourceId: source.body.id as string, authKey: source.body.authKey as string };
}

describe('the service as a process', () => {
  it('logs JSON lines that never contain a source key, HMAC secret or token, and exits 0 on SIGTERM', async () => {
    const server = await start({ ...(await storeEnv()), SIGNALGATE_ADMIN_TOKEN: ADMIN });
    const secret = 'hmac-secret-never-logged';
    const src = await seed(server.url, 10, secret);
    const agent = await admin(server.url, 'POST', `/api/admin/accounts/${src.accountId}/agents`, { name: 'a' });
    const body = 'EURUSD,buy,vol=0.1';
    const ok = await fetch(`${server.url}/api/inbound/${src.authKey}?secret=${secret}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-signature': sign(secret, body) },
      body,
    });
    expect(ok.status).toBe(202);
    await fetch(`${server.url}/api/inbound/${src.authKey}`, { method: 'POST', headers: { 'x-signalgate-secret': secret }, body });
    await fetch(`${server.url}/api/agent/signals?wait=0`, { headers: { authorization: `Bearer ${agent.body.token}` } });
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });
    const lines = server.stdout().trim().split('\n');
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    const all = server.stdout() + server.stderr();
    for (const secretValue of [src.authKey, secret, ADMIN, agent.body.token]) expect(all).not.toContain(secretValue);
    expect(all).toContain(`/api/inbound/${src.authKey.slice(0, 4)}…`);
    const accepted = lines.map((line) => JSON.parse(line)).find((entry) => entry.msg === 'request' && entry.statusCode === 202);
    expect(accepted).toMatchObject({
      method: 'POST',
      url: `/api/inbound/${src.authKey.slice(0, 4)}…`,
      ms: expect.any(Number),
      signalId: ((await ok.json()) as { id: string }).id,
    });
  });

  it('drains on SIGTERM: a request in flight is finished and answered 202, then the process exits 0', async () => {
    const env = { ...(await storeEnv()), SIGNALGATE_ADMIN_TOKEN: ADMIN };
    const server = await start(env);
    const src = await seed(server.url, 10);
    const { port } = new URL(server.url);
    const socket = net.connect(Number(port), '127.0.0.1');
    await new Promise((resolve) => socket.once('connect', resolve));
    let response = '';
    socket.on('data', (d) => (response += d.toString()));
    const socketClosed = new Promise((resolve) => socket.once('close', resolve));
    const body = 'EURUSD,sell,vol=0.2';
    socket.write(
      `POST /api/inbound/${src.authKey} HTTP/1.1\r\nHost: x\r\nContent-Type: text/plain\r\nContent-Length: ${body.length}\r\n\r\n` +
        body.slice(0, 6),
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    server.child.kill('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // write, not end: a client that half-closes its socket gives up on the answer.
    socket.write(body.slice(6));
    expect(await server.exited).toEqual({ code: 0, signal: null });
    await socketClosed;
    expect(response).toMatch(/^HTTP\/1\.1 202/);
    const id = /"id":"(sig_[^"]+)"/.exec(response)![1]!;

    const again = await start(env);
    expect((await admin(again.url, 'GET', `/api/admin/signals/${id}`)).status).toBe(200);
  });

  it('loses no acknowledged signal when SIGKILLed under load', async () => {
    const env = { ...(await storeEnv()), SIGNALGATE_ADMIN_TOKEN: ADMIN };
    const server = await start(env);
    const src = await seed(server.url, 1_000_000);
    const accepted: string[] = [];
    let stop = false;
    const worker = async (w: number) => {
      for (let i = 0; !stop && i < 5000; i++) {
        try {
          const res = await fetch(`${server.url}/api/inbound/${src.authKey}`, {
            method: 'POST',
            headers: { 'content-type': 'text/plain' },
            body: `EURUSD,buy,vol=0.01,comment=w${w}-${i}`,
          });
          if (res.status === 202) accepted.push(((await res.json()) as { id: string }).id);
          else await res.body?.cancel();
        } catch {
          return; // the server is gone
        }
      }
    };
    const workers = Array.from({ length: 16 }, (_, w) => worker(w));
    while (accepted.length < 300) await new Promise((resolve) => setTimeout(resolve, 20));
    server.child.kill('SIGKILL');
    await server.exited;
    stop = true;
    await Promise.all(workers);
    expect(accepted.length).toBeGreaterThanOrEqual(300);

    const restarted = await start(env);
    const logged = await loggedSignalIds(restarted.url, ADMIN, src.sourceId);
    const missing = accepted.filter((id) => !logged.has(id));
    expect(missing).toEqual([]);
    const usage = await admin(restarted.url, 'GET', `/api/admin/accounts/${src.accountId}/usage`);
    expect(usage.body.used).toBe(logged.size);
  });

  it('generates the admin token on first start, prints it once, and keeps it across restarts', async () => {
    const env = await storeEnv();
    const first = await start(env);
    // Standard error is a pipe of its own: its data may arrive after the listening line.
    for (let i = 0; i < 100 && !first.stderr().includes('sgadm_'); i++) await new Promise((r) => setTimeout(r, 20));
    const token = /^\s+(sgadm_\S+)$/m.exec(first.stderr())?.[1];
    expect(token).toBeDefined();
    expect((await admin(first.url, 'POST', '/api/admin/accounts', { name: 'x', monthlySignalQuota: 1 }, token)).status).toBe(201);
    first.child.kill('SIGTERM');
    await first.exited;
    const second = await start(env);
    expect((await admin(second.url, 'POST', '/api/admin/accounts', { name: 'y', monthlySignalQuota: 1 }, token)).status).toBe(201);
    expect((await admin(second.url, 'POST', '/api/admin/accounts', { name: 'z', monthlySignalQuota: 1 }, 'wrong')).status).toBe(401);
    second.child.kill('SIGTERM');
    await second.exited;
    if (!second.child.stderr!.readableEnded) await new Promise((resolve) => second.child.stderr!.once('end', resolve));
    expect(second.stderr()).not.toContain('sgadm_');
  });
});
