import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { CLI, spawnServer } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const onSqlite = process.env.SIGNALGATE_TEST_STORE !== 'postgres';
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

function freshDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-start-'));
  dirs.push(dir);
  return dir;
}

/** Runs `signalgate serve` to its end; `whenStderr` may act on the process as its error output grows. */
function serve(
  env: Record<string, string>,
  whenStderr?: (stderr: string, stop: () => void) => void,
  spawned?: (child: ChildProcess) => void,
) {
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, HOST: '127.0.0.1', PORT: '0', SIGNALGATE_ADMIN_TOKEN: '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned?.(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
    whenStderr?.(stderr, () => child.kill('SIGTERM'));
  });
  // A guard against a hang, well inside the test timeout; generous, so a loaded machine never trips it.
  const timer = setTimeout(() => child.kill('SIGKILL'), 40_000);
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

describe.runIf(onSqlite)('starting the service', () => {
  it.each([
    [{ PORT: 'abc' }, 'PORT must be a whole number'],
    [
      { SIGNALGATE_LOG_LEVEL: 'verbose' },
      'SIGNALGATE_LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent',
    ],
    [
      { SIGNALGATE_PUBLIC_URL: 'ftp://signals.example.com' },
      'SIGNALGATE_PUBLIC_URL must be the http:// or https:// address',
    ],
    [{ SIGNALGATE_PUBLIC_URL: 'not a url' }, 'SIGNALGATE_PUBLIC_URL must be'],
    [
      { SIGNALGATE_RETENTION: '90 days' },
      "SIGNALGATE_RETENTION must be a duration like 90d, 12h, 30m or 45s (a whole number above 0 and one unit: s, m, h or d), got '90 days'",
    ],
    [{ SIGNALGATE_RETENTION: '0d' }, 'SIGNALGATE_RETENTION must be a duration'],
    [
      { SIGNALGATE_NOTIFY_RETRY: '10m,5s' },
      "SIGNALGATE_NOTIFY_RETRY must be the first delay and the longest, like 5s,10m (each a whole number and one unit of ms, s, m or h; the longest at least the first and at most 1d), got '10m,5s'",
    ],
    [
      { SIGNALGATE_TRUST_PROXY: '127.0.0.1,10.0.0.1/8' },
      "SIGNALGATE_TRUST_PROXY: '10.0.0.1/8' has bits set past its /8 prefix",
    ],
    [
      { SIGNALGATE_INBOUND_THREAD: 'yes' },
      "SIGNALGATE_INBOUND_THREAD must be auto (a thread of its own only with more than one CPU), on or off, got 'yes'",
    ],
    [{ SIGNALGATE_TRUST_PROXY: 'loopback' }, "SIGNALGATE_TRUST_PROXY: 'loopback' is not an IPv4 or IPv6 address"],
    // The README's old example, and a short one: guessable, so refused with how to make a strong one.
    [
      { SIGNALGATE_ADMIN_TOKEN: 'change-me-to-something-long' },
      'SIGNALGATE_ADMIN_TOKEN is too weak to guard the service (about 99 bits; at least 128 are needed, counted as its length times log2 of how many different characters it uses); make one with `openssl rand -base64 32` and set SIGNALGATE_ADMIN_TOKEN to it',
    ],
    [
      { SIGNALGATE_METRICS_TOKEN: 'metrics-only-token-4567' },
      'SIGNALGATE_METRICS_TOKEN is too weak to guard the service',
    ],
    [
      { SIGNALGATE_DATABASE_URL: 'postgres://user:pw@127.0.0.1:1/none' },
      'cannot use the PostgreSQL store at SIGNALGATE_DATABASE_URL=postgres://user:****@127.0.0.1:1/none',
    ],
  ])('with %j fails with one sentence naming the setting, no stack trace', async (env, sentence) => {
    const run = await serve({ SIGNALGATE_DATA_DIR: freshDir(), ...env });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`signalgate: cannot start: ${sentence}`);
    expect(run.stderr).not.toMatch(/^\s+at /m);
    expect(run.stderr).not.toContain(':pw@');
  });

  it('a data directory that is a file fails naming SIGNALGATE_DATA_DIR', async () => {
    const file = path.join(freshDir(), 'not-a-dir');
    writeFileSync(file, 'x');
    const run = await serve({ SIGNALGATE_DATA_DIR: file });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `signalgate: cannot start: cannot open the SQLite store in SIGNALGATE_DATA_DIR=${file}`,
    );
  });

  it('a data directory under /proc fails at once naming SIGNALGATE_DATA_DIR (a recursive mkdir there never returns)', async () => {
    // Not timed: a start that hung would be killed by serve's guard, and its code would not be 1.
    const run = await serve({ SIGNALGATE_DATA_DIR: '/proc/signalgate/data' });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      'signalgate: cannot start: cannot open the SQLite store in SIGNALGATE_DATA_DIR=/proc/signalgate/data',
    );
    expect(run.stderr).not.toMatch(/^\s+at /m);
  });

  it('a second server on the same data directory is refused naming SIGNALGATE_DATA_DIR; one killed leaves the directory free', async () => {
    const dir = freshDir();
    const env = { SIGNALGATE_DATA_DIR: dir, SIGNALGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN };
    const first = await spawnServer(env);
    try {
      const second = await serve(env);
      expect(second.code).toBe(1);
      expect(second.stderr).toContain(
        `signalgate: cannot start: another signalgate server (pid ${first.child.pid}) serves SIGNALGATE_DATA_DIR=${dir}; stop it, or give this server a data directory of its own`,
      );
      expect(second.stderr).not.toMatch(/^\s+at /m);
      // The first one serves on, unharmed.
      expect((await adminRequest(first.url, env.SIGNALGATE_ADMIN_TOKEN, 'GET', '/api/admin/signals')).status).toBe(200);
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
    }
    // The kernel dropped its lock with it: the next server starts at once, with nothing to take over.
    const next = await spawnServer(env);
    next.child.kill('SIGTERM');
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(next.stdout()).not.toContain('took over');
  });

  it('a lock file left by an earlier version is taken over when its pid no longer runs as a server', async () => {
    const dir = freshDir();
    const env = { SIGNALGATE_DATA_DIR: dir, SIGNALGATE_ADMIN_TOKEN: TEST_ADMIN_TOKEN };
    // An earlier version's lock: its pid, since given to a process that is not a server (this one).
    writeFileSync(path.join(dir, 'server.lock'), JSON.stringify({ pid: process.pid, startTime: '1', token: 'x' }));
    const next = await spawnServer(env);
    next.child.kill('SIGTERM');
    expect(await next.exited).toEqual({ code: 0, signal: null });
    expect(next.stdout()).toContain('took over the data directory of a server that is gone');
  });

  it('a port in use fails naming HOST and PORT, and the admin token generated on the way is still in its file', async () => {
    const blocker = net.createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as net.AddressInfo).port;
    const dataDir = freshDir();
    try {
      const run = await serve({ SIGNALGATE_DATA_DIR: dataDir, PORT: String(port) });
      expect(run.code).toBe(1);
      expect(run.stderr).toContain(`cannot listen on HOST=127.0.0.1 PORT=${port}`);
      const file = path.join(dataDir, 'admin-token');
      expect(run.stderr).toContain(`generated the admin token and wrote it to ${file}`);
      const token = readFileSync(file, 'utf8').trim();
      expect(token).toMatch(/^sgadm_/);
      expect(run.stderr + run.stdout).not.toContain(token);

      const again = await spawnServer({ SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: '' });
      try {
        expect(again.stderr()).not.toContain('generated the admin token');
        const accounts = await adminRequest(again.url, token, 'POST', '/api/admin/accounts', {
          name: 'Desk',
          monthlySignalQuota: 1,
        });
        expect(accounts.status).toBe(201);
      } finally {
        again.child.kill('SIGKILL');
        await again.exited;
      }
    } finally {
      blocker.close();
    }
  });

  it('SIGTERM while starting: the start completes, drains at once and exits 0', async () => {
    const run = await serve({ SIGNALGATE_DATA_DIR: freshDir() }, (stderr, stop) => {
      // The token is printed between opening the store and listening.
      if (stderr.includes('generated the admin token')) stop();
    });
    expect(run.code).toBe(0);
    const messages = run.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages.slice(-3)).toEqual([
      'listening',
      'draining: no new connections, finishing in-flight requests',
      'stopped',
    ]);
  });

  it('SIGTERM while a start hangs: given up after a few seconds, exit 0', async () => {
    // A database that accepts the connection and never answers: the start waits for it.
    // The SIGTERM goes once the start is waiting on it, not after a fixed time (a loaded machine
    // can take longer than any fixed time just to load the CLI).
    let connected!: () => void;
    const waiting = new Promise<void>((resolve) => (connected = resolve));
    const silent = net.createServer(() => connected());
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as net.AddressInfo).port;
    try {
      let child: ChildProcess | undefined;
      const running = serve(
        { SIGNALGATE_DATA_DIR: freshDir(), SIGNALGATE_DATABASE_URL: `postgres://u@127.0.0.1:${port}/db` },
        undefined,
        (c) => (child = c),
      );
      await waiting;
      child!.kill('SIGTERM');
      const run = await running;
      // Gave up by itself (serve's guard would have killed it, code null), after the grace it
      // names; how long that took on this machine is not the test's business.
      expect(run.code).toBe(0);
      expect(run.stderr).toContain('stopped by SIGTERM before the start finished (waited 5 s for it)');
    } finally {
      silent.close();
    }
  });

  it.each([
    [{ HOST: '0.0.0.0' }, /http:\/\/0\.0\.0\.0:\d+/],
    [{ SIGNALGATE_PUBLIC_URL: 'http://[::]:9000' }, /http:\/\/\[::\]:9000/],
  ])(
    'with %j warns, in the log and on stderr, that senders cannot reach the inbound URLs and to set SIGNALGATE_PUBLIC_URL',
    async (env, url) => {
      const run = await serve({ SIGNALGATE_DATA_DIR: freshDir(), ...env }, (stderr, stop) => {
        if (stderr.includes('signalgate: warning:')) stop();
      });
      expect(run.code).toBe(0);
      const warning = new RegExp(
        `inbound URLs are rendered with ${url.source}, which no sender can reach .*set SIGNALGATE_PUBLIC_URL to the address senders reach this server at`,
      );
      expect(run.stderr).toMatch(new RegExp(`signalgate: warning: ${warning.source}`));
      const logged = run.stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line));
      expect(logged.find((line) => warning.test(line.msg))).toMatchObject({ level: 40 });
    },
  );

  it('does not warn with HOST=0.0.0.0 when SIGNALGATE_PUBLIC_URL names the address senders reach', async () => {
    const run = await serve(
      { SIGNALGATE_DATA_DIR: freshDir(), HOST: '0.0.0.0', SIGNALGATE_PUBLIC_URL: 'https://signals.example.com' },
      (stderr, stop) => {
        if (stderr.includes('admin token')) setTimeout(stop, 1000);
      },
    );
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('"msg":"listening"');
    expect(run.stderr).not.toContain('warning');
  });

  it('masks the admin token in a logged path', async () => {
    const token = TEST_ADMIN_TOKEN;
    const server = await spawnServer({ SIGNALGATE_DATA_DIR: freshDir(), SIGNALGATE_ADMIN_TOKEN: token });
    try {
      expect((await fetch(`${server.url}/api/admin/${token}`)).status).toBe(404);
      expect(
        (
          await fetch(`${server.url}/api/admin/accounts/${token}/usage`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).status,
      ).toBe(404);
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
    const logged = server.stdout();
    expect(logged).toContain(`"url":"/api/admin/${token.slice(0, 4)}…"`);
    expect(logged).not.toContain(token);
  });
});
