import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readdirSync, rmSync, writeSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentProcess } from '../agent/support/agent-process.js';
import { loggedSignalIds } from '../support/admin-client.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';

/**
 * The store goes away under a running server: its own PostgreSQL instance stopped (never the
 * shared one), the disk under SQLite filled. Callers must get 503 STORE_UNAVAILABLE with
 * Retry-After within 3 s, never a hang and never a 202 for what was not stored; service resumes
 * by itself, and nothing acknowledged is lost.
 */
const ADMIN = 'outage-test-admin-token-0123456789';
const ANSWER_WITHIN_MS = 3000;
const cleanups: Array<() => unknown> = [];
afterAll(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) {
    try {
      await cleanup();
    } catch (error) {
      console.error('cleanup failed:', error);
    }
  }
});

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as net.AddressInfo).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function admin(url: string, method: string, urlPath: string, body?: unknown): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url + urlPath, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null, headers: res.headers };
}

interface Posted {
  status: number | 'unanswered';
  id: string | null;
  code: string | null;
  retryAfter: string | null;
  ms: number;
}

/** One inbound POST, timed; a connection closed unanswered (outcome unknown) is recorded as such. */
async function post(url: string, authKey: string, text: string): Promise<Posted> {
  const started = Date.now();
  try {
    const res = await fetch(`${url}/api/inbound/${authKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: text,
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json()) as { id?: string; code?: string };
    return { status: res.status, id: body.id ?? null, code: body.code ?? null, retryAfter: res.headers.get('retry-after'), ms: Date.now() - started };
  } catch {
    return { status: 'unanswered', id: null, code: null, retryAfter: null, ms: Date.now() - started };
  }
}

async function seed(url: string) {
  const account = (await admin(url, 'POST', '/api/admin/accounts', { name: 'Ops', monthlySignalQuota: 100_000 })).body;
  const agent = (await admin(url, 'POST', `/api/admin/accounts/${account.id}/agents`, { name: 'paper' })).body;
  const source = (await admin(url, 'POST', '/api/admin/sources', { accountId: account.id, name: 'alerts', maxSignalAgeSeconds: 600 })).body;
  return { account, agent, source };
}

function killServer(server: ServerProcess): Promise<unknown> {
  if (server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL');
  return server.exited;
}

async function until<T>(probe: () => Promise<T | null>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = await probe();
    if (found !== null) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** The machine's PostgreSQL binaries, newest first. */
function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions) if (existsSync(path.join(root, version, 'bin', 'pg_ctl'))) return path.join(root, version, 'bin');
  return null;
}

/** Runs a PostgreSQL binary as the `postgres` user when we are root (PostgreSQL refuses root). */
function asPostgres(command: string, args: string[]): void {
  const [file, fileArgs] = process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  execFileSync(file, fileArgs, { stdio: 'pipe', timeout: 60_000 });
}

describe('PostgreSQL stopped under a running server', () => {
  it('answers 503 STORE_UNAVAILABLE with Retry-After within 3 s, resumes when it is back, loses nothing, and the agent reconnects', async () => {
    const bin = postgresBin();
    if (bin === null) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql: install the postgresql package');
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-outage-pg-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    if (process.getuid?.() === 0) chownSync(dir, Number(execFileSync('id', ['-u', 'postgres']).toString()), Number(execFileSync('id', ['-g', 'postgres']).toString()));
    const data = path.join(dir, 'data');
    const port = await freePort();
    asPostgres(path.join(bin, 'initdb'), ['-D', data, '--auth=trust', '-U', 'postgres', '--no-sync']);
    const pgCtl = (...args: string[]) => asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, ...args]);
    const startPostgres = () =>
      pgCtl('-o', `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`, '-l', path.join(dir, 'log'), '-w', 'start');
    startPostgres();
    cleanups.push(() => {
      // Only this test's instance, by its own data directory.
      spawnSync('runuser', ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'], { stdio: 'ignore' });
    });

    const server = await spawnServer({
      SIGNALGATE_DATA_DIR: path.join(dir, 'server'),
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      SIGNALGATE_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
    });
    cleanups.push(() => killServer(server));
    const { agent, source } = await seed(server.url);
    const agentDir = path.join(dir, 'agent');
    mkdirSync(agentDir);
    const agentProcess = AgentProcess.start(server.url, agent.token, agentDir, ['--transport', 'websocket']);
    cleanups.push(() => agentProcess.kill());
    await agentProcess.connected('websocket');

    // Traffic throughout: four senders, one signal after another each.
    const results: Array<Posted & { at: number }> = [];
    let sending = true;
    let n = 0;
    const senders = Array.from({ length: 4 }, async () => {
      while (sending) {
        const at = Date.now();
        const result = await post(server.url, source.authKey, `EURUSD,buy,vol=0.01,comment=n${n++}`);
        results.push({ ...result, at });
        if (result.status !== 202) await new Promise((resolve) => setTimeout(resolve, 50));
      }
    });
    try {
      await until(async () => (results.filter((r) => r.status === 202).length >= 20 ? true : null), '20 accepted signals');

      pgCtl('-m', 'fast', '-w', 'stop');
      const stoppedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 3000));

      // Every request sent after the stop completed: answered, within 3 s, 503 STORE_UNAVAILABLE.
      const during = results.filter((r) => r.at >= stoppedAt);
      expect(during.length).toBeGreaterThan(4);
      for (const r of during) {
        expect(r).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE', retryAfter: expect.stringMatching(/^\d+$/) });
        expect(r.ms).toBeLessThan(ANSWER_WITHIN_MS);
      }
      // The admin and agent APIs answer 503 too.
      const adminDown = await admin(server.url, 'GET', `/api/admin/sources/${source.id}`);
      expect(adminDown.status).toBe(503);
      expect(adminDown.body.code).toBe('STORE_UNAVAILABLE');
      expect(adminDown.headers.get('retry-after')).toMatch(/^\d+$/);
      const poll = await fetch(`${server.url}/api/agent/signals`, { headers: { authorization: `Bearer ${agent.token}` } });
      expect(poll.status).toBe(503);
      expect(((await poll.json()) as { code: string }).code).toBe('STORE_UNAVAILABLE');
      const health = await fetch(`${server.url}/readyz`);
      expect(health.status).toBe(503);

      startPostgres();
      const back = await until(async () => {
        const r = await post(server.url, source.authKey, 'EURUSD,sell,vol=0.01,comment=back');
        return r.status === 202 ? r : null;
      }, 'service to resume');
      results.push({ ...back, at: Date.now() });
      await until(async () => (results.filter((r) => r.at > Date.now() - 1000 && r.status === 202).length > 0 ? true : null), 'traffic to be accepted again');
    } finally {
      sending = false;
      await Promise.all(senders);
    }

    const accepted = results.filter((r) => r.status === 202).map((r) => r.id!);
    const logged = await loggedSignalIds(server.url, ADMIN, source.id);
    for (const id of accepted) expect(logged.has(id)).toBe(true);
    // Nothing answered otherwise but 202, 503 STORE_UNAVAILABLE, or (in flight at the stop) no answer.
    for (const r of results) {
      if (r.status !== 202 && r.status !== 'unanswered') expect(r.code).toBe('STORE_UNAVAILABLE');
    }
    // The agent reconnects by itself and gets every accepted signal.
    await until(async () => {
      const handled = new Set(agentProcess.handled().map((l) => l.signalId as string));
      return accepted.every((id) => handled.has(id)) ? true : null;
    }, 'the agent to handle every accepted signal', 60_000);
    expect(agentProcess.lines().filter((l) => l.msg === 'connected').length).toBeGreaterThanOrEqual(2);
  });
});

describe('the disk under SQLite full', () => {
  // Inbound requests committed on the inbound thread, and on the event loop (the choice with one CPU).
  it.for(['on', 'off'])('with SIGNALGATE_INBOUND_THREAD=%s answers 503 STORE_UNAVAILABLE with Retry-After, says so in health, resumes when space is freed, database intact', async (inboundThread, context) => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-outage-disk-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { encoding: 'utf8' });
    if (mount.status !== 0) {
      context.skip(`cannot mount a small tmpfs to fill (needs root): ${(mount.stderr || mount.error?.message || '').trim()}`);
      return;
    }
    cleanups.push(() => {
      spawnSync('umount', ['-l', dir]);
    });

    const server = await spawnServer({ SIGNALGATE_DATA_DIR: dir, SIGNALGATE_ADMIN_TOKEN: ADMIN, SIGNALGATE_INBOUND_THREAD: inboundThread });
    cleanups.push(() => killServer(server));
    const { source } = await seed(server.url);
    const accepted: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await post(server.url, source.authKey, `EURUSD,buy,vol=0.01,comment=before${i}`);
      expect(r.status).toBe(202);
      accepted.push(r.id!);
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    // Fill the filesystem to the last byte.
    const filler = path.join(dir, 'filler');
    const fd = openSync(filler, 'w');
    const chunk = Buffer.alloc(64 * 1024, 1);
    try {
      for (let size = chunk.length; size > 0; ) {
        try {
          writeSync(fd, chunk, 0, size);
        } catch {
          size = Math.floor(size / 2);
        }
      }
    } finally {
      closeSync(fd);
    }

    // Until SQLite needs a page it does not have, commits may still succeed (and are stored).
    const refused = await until(async () => {
      const r = await post(server.url, source.authKey, `EURUSD,buy,vol=0.01,comment=${'x'.repeat(200)}`);
      expect(r.ms).toBeLessThan(ANSWER_WITHIN_MS);
      if (r.status === 202) accepted.push(r.id!);
      else return r;
      return null;
    }, 'a refusal for lack of space', 60_000);
    expect(refused).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE', retryAfter: expect.stringMatching(/^\d+$/) });
    const again = await post(server.url, source.authKey, 'EURUSD,sell,vol=0.01');
    expect(again).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE' });
    expect(again.ms).toBeLessThan(ANSWER_WITHIN_MS);
    const write = await admin(server.url, 'POST', '/api/admin/sources', { accountId: source.accountId, name: 'more' });
    expect(write.status).toBe(503);
    expect(write.body.code).toBe('STORE_UNAVAILABLE');
    const health = await fetch(`${server.url}/readyz`);
    expect(health.status).toBe(503);
    expect(await health.text()).toContain('free');

    rmSync(filler);
    const back = await until(async () => {
      const r = await post(server.url, source.authKey, 'EURUSD,sell,vol=0.01,comment=back');
      return r.status === 202 ? r : null;
    }, 'service to resume after space was freed');
    accepted.push(back.id!);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);

    const logged = await loggedSignalIds(server.url, ADMIN, source.id);
    for (const id of accepted) expect(logged.has(id)).toBe(true);
    server.child.kill('SIGTERM');
    expect((await server.exited).code).toBe(0);
    const db = new Database(path.join(dir, 'signalgate.db'), { readonly: true });
    try {
      expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      db.close();
    }
  });
});
