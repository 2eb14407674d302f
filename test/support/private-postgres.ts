import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { freePort } from './free-port.js';

/**
 * Vitest global setup: the PostgreSQL the tests run against. With SIGNALGATE_TEST_DATABASE_URL
 * set, that server (its database must exist; each test file makes its own schema in it).
 * Without it, a private, throwaway cluster of Debian's `postgresql` package: initdb in a
 * temporary directory, trust authentication, loopback on a free port, a socket directory of its
 * own, a database `test`; stopped and deleted when the run ends. The URL reaches the test
 * workers through the environment, which they inherit.
 */
export default async function setup(): Promise<(() => Promise<void>) | undefined> {
  if (process.env.SIGNALGATE_TEST_DATABASE_URL !== undefined && process.env.SIGNALGATE_TEST_DATABASE_URL !== '')
    return undefined;
  const cluster = await startPrivateCluster();
  process.env.SIGNALGATE_TEST_DATABASE_URL = cluster.url;
  return async () => {
    await cluster.stop();
    delete process.env.SIGNALGATE_TEST_DATABASE_URL;
  };
}

interface PrivateCluster {
  url: string;
  stop(): Promise<void>;
}

/** Debian installs each major version's server programs under /usr/lib/postgresql/<major>/bin. */
const DEBIAN_SERVERS = '/usr/lib/postgresql';

async function startPrivateCluster(): Promise<PrivateCluster> {
  const bin = serverBinaries();
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-test-postgres-'));
  const dataDir = path.join(dir, 'data');
  const socketDir = path.join(dir, 'socket');
  mkdirSync(socketDir);
  // PostgreSQL refuses to run as root: as root, the cluster belongs to the `postgres` user.
  const owner = process.getuid?.() === 0 ? postgresUser() : undefined;
  if (owner !== undefined) {
    chownSync(dir, owner.uid, owner.gid);
    chownSync(socketDir, owner.uid, owner.gid);
  }
  const as = owner === undefined ? {} : { uid: owner.uid, gid: owner.gid };
  const removeDir = () => rmSync(dir, { recursive: true, force: true });
  try {
    execFileSync(
      path.join(bin, 'initdb'),
      ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
      {
        ...as,
        cwd: dir,
        stdio: ['ignore', 'ignore', 'pipe'],
      },
    );
  } catch (error) {
    removeDir();
    throw new Error(
      `private PostgreSQL for the tests: initdb failed (${String((error as { stderr?: Buffer }).stderr ?? error).trim()}); set SIGNALGATE_TEST_DATABASE_URL to a server of your own instead`,
    );
  }

  const port = await freePort();
  const server: ChildProcess = spawn(
    path.join(bin, 'postgres'),
    ['-D', dataDir, '-p', String(port), '-k', socketDir, '-c', 'listen_addresses=127.0.0.1'],
    { ...as, cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let log = '';
  server.stderr?.on('data', (chunk: Buffer) => (log = (log + chunk.toString()).slice(-8000)));
  const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => (running = false));

  // Should the run end without its teardown (an uncaught error), the server goes with it:
  // SIGQUIT is PostgreSQL's immediate shutdown, which needs no waiting.
  const orphaned = () => {
    if (running) server.kill('SIGQUIT');
    removeDir();
  };
  process.once('exit', orphaned);

  const stop = async () => {
    process.off('exit', orphaned);
    // SIGINT: PostgreSQL's fast shutdown (sessions rolled back, no wait for clients).
    if (running) server.kill('SIGINT');
    await Promise.race([exited, sleep(15_000, undefined, { ref: false })]);
    if (running) server.kill('SIGKILL');
    await exited;
    removeDir();
  };

  const base = `postgres://postgres@127.0.0.1:${port}`;
  try {
    await waitForServer(
      `${base}/postgres`,
      () => running,
      () => log,
    );
    const admin = new pg.Client({ connectionString: `${base}/postgres` });
    await admin.connect();
    try {
      await admin.query('CREATE DATABASE test');
    } finally {
      await admin.end();
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: `${base}/test`, stop };
}

/** The newest PostgreSQL server installed from Debian's packages. */
function serverBinaries(): string {
  const majors = existsSync(DEBIAN_SERVERS)
    ? readdirSync(DEBIAN_SERVERS)
        .filter((name) => existsSync(path.join(DEBIAN_SERVERS, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors[0] === undefined) {
    throw new Error(
      `private PostgreSQL for the tests: no server under ${DEBIAN_SERVERS}; install Debian's postgresql package (bash scripts/test-packages.sh does) or set SIGNALGATE_TEST_DATABASE_URL`,
    );
  }
  return path.join(DEBIAN_SERVERS, majors[0], 'bin');
}

function postgresUser(): { uid: number; gid: number } {
  const entry = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .map((line) => line.split(':'))
    .find((fields) => fields[0] === 'postgres');
  if (entry === undefined) {
    throw new Error(
      "private PostgreSQL for the tests: run as root, it needs the user 'postgres' (Debian's postgresql package makes it); install the package or run the tests as another user",
    );
  }
  return { uid: Number(entry[2]), gid: Number(entry[3]) };
}

async function waitForServer(url: string, running: () => boolean, log: () => string): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const client = new pg.Client({ connectionString: url });
    try {
      await client.connect();
      await client.end();
      return;
    } catch (error) {
      await client.end().catch(() => undefined);
      if (!running() || Date.now() > deadline) {
        throw new Error(`private PostgreSQL for the tests did not start (${String(error)}); its log:\n${log()}`);
      }
    }
    await sleep(100);
  }
}
