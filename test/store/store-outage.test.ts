import { execFileSync, spawnSync } from 'node:child_process';
import {
  chownSync,
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { AgentProcess } from '../agent/support/agent-process.js';
import { adminRequest, loggedSignalIds } from '../support/admin-client.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { freePort } from '../support/free-port.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

/**
 * The store goes away under a running server: its own PostgreSQL instance stopped (never the
 * shared one), the disk under SQLite filled. Callers must get 503 STORE_UNAVAILABLE with
 * Retry-After within 3 s, never a hang and never a 202 for what was not stored; service resumes
 * by itself, and nothing acknowledged is lost.
 */
const ADMIN = TEST_ADMIN_TOKEN;
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

function admin(url: string, method: string, urlPath: string, body?: unknown) {
  return adminRequest(url, ADMIN, method, urlPath, body);
}

interface Posted {
  status: number | 'unanswered';
  id: string | null;
  code: string | null;
  retryAfter: string | null;
  ms: number;
}

/** One inbound POST, timed; a connection closed unanswered (outcome unknown) is recorded as such. */
async function post(url: string, authKey: string, text: string, idempotencyKey?: string): Promise<Posted> {
  const started = Date.now();
  try {
    const res = await fetch(`${url}/api/inbound/${authKey}`, {
      method: 'POST',
      headers: {
        'content-type': 'text/plain',
        ...(idempotencyKey !== undefined && { 'idempotency-key': idempotencyKey }),
      },
      body: text,
      signal: AbortSignal.timeout(10_000),
    });
    const body = (await res.json()) as { id?: string; code?: string };
    return {
      status: res.status,
      id: body.id ?? null,
      code: body.code ?? null,
      retryAfter: res.headers.get('retry-after'),
      ms: Date.now() - started,
    };
  } catch {
    return { status: 'unanswered', id: null, code: null, retryAfter: null, ms: Date.now() - started };
  }
}

async function seed(url: string) {
  const account = (await admin(url, 'POST', '/api/admin/accounts', { name: 'Ops', monthlySignalQuota: 100_000 })).body;
  const agent = (await admin(url, 'POST', `/api/admin/accounts/${account.id}/agents`, { name: 'paper' })).body;
  const source = (
    await admin(url, 'POST', '/api/admin/sources', { accountId: account.id, name: 'alerts', maxSignalAgeSeconds: 600 })
  ).body;
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
/**
 * `count` senders posting one signal after another each until `stop()`, each result kept with the
 * time it was sent; after an answer other than 202 a sender pauses `pauseMs`.
 */
function steadySenders(
  url: string,
  authKey: string,
  count: number,
  pauseMs: number,
  signal: (i: number) => { text: string; key?: string },
) {
  const results: Array<Posted & { at: number; text: string; key?: string }> = [];
  let sending = true;
  let n = 0;
  const senders = Array.from({ length: count }, async () => {
    while (sending) {
      const at = Date.now();
      const { text, key } = signal(n++);
      const result = await post(url, authKey, text, key);
      results.push({ ...result, at, text, key });
      if (result.status !== 202) await new Promise((resolve) => setTimeout(resolve, pauseMs));
    }
  });
  return {
    results,
    stop: async () => {
      sending = false;
      await Promise.all(senders);
    },
  };
}

function postgresBin(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root).sort((a, b) => Number(b) - Number(a));
  for (const version of versions)
    if (existsSync(path.join(root, version, 'bin', 'pg_ctl'))) return path.join(root, version, 'bin');
  return null;
}

/** Runs a PostgreSQL binary as the `postgres` user when we are root (PostgreSQL refuses root). */
function asPostgres(command: string, args: string[]): void {
  const [file, fileArgs] =
    process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
  execFileSync(file, fileArgs, { stdio: 'pipe', timeout: 60_000 });
}

/** This test's own PostgreSQL instance, from the machine's binaries, on its own port and directory. */
async function ownPostgres(): Promise<{
  dir: string;
  port: number;
  start: () => void;
  stop: () => void;
  pids: () => number[];
}> {
  const bin = postgresBin();
  if (bin === null) throw new Error('no PostgreSQL binaries under /usr/lib/postgresql: install the postgresql package');
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-outage-pg-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  if (process.getuid?.() === 0)
    chownSync(
      dir,
      Number(execFileSync('id', ['-u', 'postgres']).toString()),
      Number(execFileSync('id', ['-g', 'postgres']).toString()),
    );
  const data = path.join(dir, 'data');
  const port = await freePort();
  asPostgres(path.join(bin, 'initdb'), ['-D', data, '--auth=trust', '-U', 'postgres', '--no-sync']);
  const pgCtl = (...args: string[]) => asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, ...args]);
  const start = () =>
    pgCtl(
      '-o',
      `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
      '-l',
      path.join(dir, 'log'),
      '-w',
      'start',
    );
  /** The postmaster of this instance (by its own data directory) and its children. */
  const pids = (): number[] => {
    if (!existsSync(path.join(data, 'postmaster.pid'))) return [];
    const postmaster = Number(readFileSync(path.join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
    const children = readdirSync('/proc')
      .filter((name) => /^\d+$/.test(name))
      .filter((name) => {
        try {
          // Field 4 of /proc/PID/stat, after the parenthesised command name, is the parent's pid.
          const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
          return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === postmaster;
        } catch {
          return false;
        }
      })
      .map(Number);
    return [postmaster, ...children];
  };
  start();
  cleanups.push(() => {
    for (const pid of pids()) {
      try {
        process.kill(pid, 'SIGCONT');
      } catch {
        // gone already
      }
    }
    // Only this test's instance, by its own data directory.
    spawnSync('runuser', ['-u', 'postgres', '--', path.join(bin, 'pg_ctl'), '-D', data, '-m', 'immediate', 'stop'], {
      stdio: 'ignore',
    });
  });
  return { dir, port, start, stop: () => pgCtl('-m', 'fast', '-w', 'stop'), pids };
}

describe('PostgreSQL stopped under a running server', () => {
  it('answers 503 STORE_UNAVAILABLE with Retry-After within 3 s, resumes when it is back, loses nothing, and the agent reconnects', async () => {
    const { dir, port, start: startPostgres, stop: stopPostgres } = await ownPostgres();

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
    const traffic = steadySenders(server.url, source.authKey, 4, 50, (i) => ({
      text: `EURUSD,buy,vol=0.01,comment=n${i}`,
    }));
    const { results } = traffic;
    try {
      await until(
        async () => (results.filter((r) => r.status === 202).length >= 20 ? true : null),
        '20 accepted signals',
      );

      stopPostgres();
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
      const poll = await fetch(`${server.url}/api/agent/signals`, {
        headers: { authorization: `Bearer ${agent.token}` },
      });
      expect(poll.status).toBe(503);
      expect(((await poll.json()) as { code: string }).code).toBe('STORE_UNAVAILABLE');
      const health = await fetch(`${server.url}/readyz`);
      expect(health.status).toBe(503);

      startPostgres();
      const back = await until(async () => {
        const r = await post(server.url, source.authKey, 'EURUSD,sell,vol=0.01,comment=back');
        return r.status === 202 ? r : null;
      }, 'service to resume');
      results.push({ ...back, at: Date.now(), text: 'EURUSD,sell,vol=0.01,comment=back' });
      await until(
        async () => (results.filter((r) => r.at > Date.now() - 1000 && r.status === 202).length > 0 ? true : null),
        'traffic to be accepted again',
      );
    } finally {
      await traffic.stop();
    }

    const accepted = results.filter((r) => r.status === 202).map((r) => r.id!);
    const logged = await loggedSignalIds(server.url, ADMIN, source.id);
    for (const id of accepted) expect(logged.has(id)).toBe(true);
    // Nothing answered otherwise but 202, 503 STORE_UNAVAILABLE, or (in flight at the stop) no answer.
    for (const r of results) {
      if (r.status !== 202 && r.status !== 'unanswered') expect(r.code).toBe('STORE_UNAVAILABLE');
    }
    // The agent reconnects by itself and gets every accepted signal.
    await until(
      async () => {
        const handled = new Set(agentProcess.handled().map((l) => l.signalId as string));
        return accepted.every((id) => handled.has(id)) ? true : null;
      },
      'the agent to handle every accepted signal',
      60_000,
    );
    expect(agentProcess.lines().filter((l) => l.msg === 'connected').length).toBeGreaterThanOrEqual(2);
  });
});

describe('PostgreSQL that accepts connections and stops answering (its processes stopped)', () => {
  it('answers within 3 s, never 202 for what is not stored, resumes by itself after SIGCONT, and loses nothing acknowledged', async () => {
    const { dir, port, pids } = await ownPostgres();
    const server = await spawnServer({
      SIGNALGATE_DATA_DIR: path.join(dir, 'server'),
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      SIGNALGATE_DATABASE_URL: `postgres://postgres@127.0.0.1:${port}/postgres`,
    });
    cleanups.push(() => killServer(server));
    const { source } = await seed(server.url);

    // Four senders, one signal after another each, every one with its own Idempotency-Key.
    const traffic = steadySenders(server.url, source.authKey, 4, 50, (i) => ({
      text: `EURUSD,buy,vol=0.01,comment=h${i}`,
      key: `hang-${i}`,
    }));
    const { results } = traffic;
    const signalAll = (signal: NodeJS.Signals, order: number[]) => {
      for (const pid of order) process.kill(pid, signal);
    };
    let frozen: number[] = [];
    try {
      await until(
        async () => (results.filter((r) => r.status === 202).length >= 20 ? true : null),
        '20 accepted signals',
      );

      // The postmaster first, so it starts no new backend, then every backend.
      frozen = pids();
      expect(frozen.length).toBeGreaterThan(1);
      signalAll('SIGSTOP', frozen);
      const stoppedAt = Date.now();
      await new Promise((resolve) => setTimeout(resolve, 5000));

      const during = results.filter((r) => r.at >= stoppedAt);
      expect(during.length).toBeGreaterThan(8);
      for (const r of during) {
        // Answered in time: 503 with Retry-After, or, for a call that was under way when the
        // server froze (it may yet commit), the connection closed unanswered.
        expect(r.ms).toBeLessThan(ANSWER_WITHIN_MS);
        if (r.status !== 'unanswered')
          expect(r).toMatchObject({
            status: 503,
            code: 'STORE_UNAVAILABLE',
            retryAfter: expect.stringMatching(/^\d+$/),
          });
      }
      expect(during.filter((r) => r.status === 503).length).toBeGreaterThan(4);
      // Fewer unanswered than calls that can be under way at once (four senders).
      expect(during.filter((r) => r.status === 'unanswered').length).toBeLessThanOrEqual(4);
      expect((await fetch(`${server.url}/readyz`, { signal: AbortSignal.timeout(10_000) })).status).toBe(503);

      signalAll('SIGCONT', [...frozen].reverse());
      frozen = [];
      await until(
        async () => (results.some((r) => r.at > Date.now() - 1000 && r.status === 202) ? true : null),
        'service to resume by itself',
      );
    } finally {
      if (frozen.length > 0) signalAll('SIGCONT', [...frozen].reverse());
      await traffic.stop();
    }

    // Every 202 is in the log. A request closed unanswered, sent again with its key, is answered
    // 202 once: as the signal it was stored as, when the frozen call did commit.
    const logged = await loggedSignalIds(server.url, ADMIN, source.id);
    for (const r of results.filter((r) => r.status === 202)) expect(logged.has(r.id!)).toBe(true);
    for (const r of results.filter((r) => r.status === 'unanswered')) {
      const again = await post(server.url, source.authKey, r.text, r.key);
      expect(again.status).toBe(202);
      expect((await post(server.url, source.authKey, r.text, r.key)).id).toBe(again.id);
    }
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
  });
});

/** An 8 MiB tmpfs of the test's own to fill (mounting needs root: the test is skipped, saying so, without it). */
function smallDisk(prefix: string, context: { skip: (note: string) => void }): string | null {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const mount = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=8m', 'tmpfs', dir], { encoding: 'utf8' });
  if (mount.status !== 0) {
    context.skip(
      `cannot mount a small tmpfs to fill (needs root): ${(mount.stderr || mount.error?.message || '').trim()}`,
    );
    return null;
  }
  cleanups.push(() => {
    spawnSync('umount', ['-l', dir]);
  });
  return dir;
}

/** Writes `chunk`, then ever smaller parts of it, until the filesystem has not one byte left. */
function fillToLastByte(fd: number, chunk: Buffer): void {
  for (let size = chunk.length; size > 0;) {
    try {
      writeSync(fd, chunk, 0, size);
    } catch {
      size = Math.floor(size / 2);
    }
  }
}

/** SQLite's own check of the whole file finds nothing wrong. */
function expectIntact(file: string): void {
  const db = new Database(file, { readonly: true });
  try {
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
  } finally {
    db.close();
  }
}

describe('the disk under SQLite full', () => {
  // Inbound requests committed on the inbound thread, and on the event loop (the choice with one CPU).
  it.for(['on', 'off'])(
    'with SIGNALGATE_INBOUND_THREAD=%s answers 503 STORE_UNAVAILABLE with Retry-After, says so in health, resumes when space is freed, database intact',
    async (inboundThread, context) => {
      const dir = smallDisk('signalgate-outage-disk-', context);
      if (dir === null) return;

      const server = await spawnServer({
        SIGNALGATE_DATA_DIR: dir,
        SIGNALGATE_ADMIN_TOKEN: ADMIN,
        SIGNALGATE_INBOUND_THREAD: inboundThread,
      });
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
        fillToLastByte(fd, chunk);
      } finally {
        closeSync(fd);
      }

      // Until SQLite needs a page it does not have, commits may still succeed (and are stored):
      // the signal's 422 for its too long comment is a logged answer too, and the WAL may have
      // room left in the file once a checkpoint has let it start over.
      const refused = await until(
        async () => {
          const r = await post(server.url, source.authKey, `EURUSD,buy,vol=0.01,comment=${'x'.repeat(200)}`);
          expect(r.ms).toBeLessThan(ANSWER_WITHIN_MS);
          expect([202, 422, 503]).toContain(r.status);
          if (r.status === 202) accepted.push(r.id!);
          return r.status === 503 ? r : null;
        },
        'a refusal for lack of space',
        60_000,
      );
      expect(refused).toMatchObject({
        status: 503,
        code: 'STORE_UNAVAILABLE',
        retryAfter: expect.stringMatching(/^\d+$/),
      });
      const again = await post(server.url, source.authKey, 'EURUSD,sell,vol=0.01');
      expect(again).toMatchObject({ status: 503, code: 'STORE_UNAVAILABLE' });
      expect(again.ms).toBeLessThan(ANSWER_WITHIN_MS);
      const write = await admin(server.url, 'POST', '/api/admin/sources', {
        accountId: source.accountId,
        name: 'more',
      });
      expect(write.status).toBe(503);
      expect(write.body.code).toBe('STORE_UNAVAILABLE');
      const health = await fetch(`${server.url}/readyz`);
      expect(health.status).toBe(503);
      // How much space is left is for the operator's token only.
      expect(await health.text()).not.toMatch(/bytes|free/);
      const told = await fetch(`${server.url}/readyz`, { headers: { authorization: `Bearer ${ADMIN}` } });
      expect(told.status).toBe(503);
      expect(await told.text()).toContain('bytes free');

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
      expectIntact(path.join(dir, 'signalgate.db'));
    },
  );

  it.for([
    { fault: 'SQLite finds no room when it writes' },
    { fault: 'the WAL sync fails with ENOSPC (as on thin-provisioned storage)' },
  ])(
    'under a steady stream of signals as the disk fills ($fault): 503 while full, 202 again once freed, every 202 stored',
    async ({ fault }, context) => {
      const dir = smallDisk('signalgate-outage-stream-', context);
      if (dir === null) return;
      const nodeArgs = fault.startsWith('the WAL sync')
        ? ['--import', path.resolve('test/fixtures/sync-fails-when-full.mjs')]
        : [];
      // On the inbound thread, whose syncs the fixture fails.
      const server = await spawnServer(
        { SIGNALGATE_DATA_DIR: dir, SIGNALGATE_ADMIN_TOKEN: ADMIN, SIGNALGATE_INBOUND_THREAD: 'on' },
        nodeArgs,
      );
      cleanups.push(() => killServer(server));
      const { source } = await seed(server.url);

      const traffic = steadySenders(server.url, source.authKey, 6, 20, (i) => ({
        text: `EURUSD,buy,vol=0.01,comment=s${i}`,
      }));
      const { results } = traffic;
      const filler = path.join(dir, 'filler');
      try {
        await until(
          async () => (results.filter((r) => r.status === 202).length >= 30 ? true : null),
          '30 accepted signals',
        );
        // Fill the filesystem to the last byte while the senders go on: first to 1 MiB free, where
        // (with the fixture) syncs fail though writes still find room, for a second; then the rest.
        const fd = openSync(filler, 'w');
        const chunk = Buffer.alloc(16 * 1024, 1);
        const free = () => {
          const { bavail, bsize } = statfsSync(dir);
          return bavail * bsize;
        };
        try {
          while (free() > 1024 * 1024) writeSync(fd, chunk);
          await new Promise((resolve) => setTimeout(resolve, 1500));
          fillToLastByte(fd, chunk);
        } finally {
          closeSync(fd);
        }
        const fullAt = Date.now();
        await until(
          async () => (results.filter((r) => r.at > fullAt && r.status === 503).length >= 10 ? true : null),
          'refusals for lack of space',
          60_000,
        );
        expect((await fetch(`${server.url}/readyz`)).status).toBe(503);

        rmSync(filler);
        const freedAt = Date.now();
        await until(
          async () => (results.filter((r) => r.at > freedAt && r.status === 202).length >= 10 ? true : null),
          'service to resume after space was freed',
        );
      } finally {
        await traffic.stop();
      }

      // Only 202 or 503 STORE_UNAVAILABLE with Retry-After, each in time; never a 500. A batch
      // committed whose sync failed may or may not be on disk: its connections close unanswered,
      // and only then (at most the six senders' requests).
      for (const r of results) {
        expect(r.ms).toBeLessThan(ANSWER_WITHIN_MS);
        if (r.status !== 202 && r.status !== 'unanswered')
          expect(r).toMatchObject({
            status: 503,
            code: 'STORE_UNAVAILABLE',
            retryAfter: expect.stringMatching(/^\d+$/),
          });
      }
      expect(results.filter((r) => r.status === 'unanswered').length).toBeLessThanOrEqual(
        fault.startsWith('the WAL sync') ? 6 : 0,
      );
      // The fault did happen: the log names the failed sync.
      if (fault.startsWith('the WAL sync'))
        expect(server.stdout()).toContain('ENOSPC: no space left on device, fdatasync');
      const logged = await loggedSignalIds(server.url, ADMIN, source.id);
      for (const r of results.filter((r) => r.status === 202)) expect(logged.has(r.id!)).toBe(true);
      expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
      server.child.kill('SIGTERM');
      expect((await server.exited).code).toBe(0);
      expectIntact(path.join(dir, 'signalgate.db'));
    },
  );
});
