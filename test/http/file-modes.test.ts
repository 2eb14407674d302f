import { spawn } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { startService } from '../../src/service/start-service.js';
import { adminRequest } from '../support/admin-client.js';
import { CLI, spawnServer, type ServerProcess } from '../support/spawn-server.js';

const onPostgres = process.env.SIGNALGATE_TEST_STORE === 'postgres';
const ADMIN = 'file-modes-test-admin-token-0123';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function freshDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-modes-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function start(dataDir: string): Promise<ServerProcess> {
  const server = await spawnServer({ SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: ADMIN });
  cleanups.push(async () => {
    server.child.kill('SIGKILL');
    await server.exited;
  });
  return server;
}

async function stop(server: ServerProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await server.exited;
}

function modeOf(file: string): string {
  return (statSync(file).mode & 0o777).toString(8).padStart(3, '0');
}

/** Every entry of the data directory with its mode, and the directory's own. */
function modes(dataDir: string): Record<string, string> {
  const found: Record<string, string> = { '.': modeOf(dataDir) };
  for (const name of readdirSync(dataDir)) found[name] = modeOf(path.join(dataDir, name));
  return found;
}

function warnings(server: ServerProcess): string[] {
  return server
    .stdout()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .filter((entry) => entry.level === 40)
    .map((entry) => entry.msg);
}

describe.skipIf(onPostgres)('the data directory and its files are for the owner alone', () => {
  it('a started server makes its directory 0700, and the database, its WAL and shared memory, the lock and a backup 0600', async () => {
    const dataDir = path.join(freshDir(), 'data');
    const server = await start(dataDir);
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', {
      name: 'Ops',
      monthlySignalQuota: 100,
    });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'alerts',
    });
    expect(
      (await fetch(`${server.url}/api/inbound/${source.body.authKey}`, { method: 'POST', body: 'EURUSD,buy' })).status,
    ).toBe(202);
    const backupFile = path.join(path.dirname(dataDir), 'copy.db');
    const backup = spawn(process.execPath, [CLI, 'backup', backupFile], {
      env: { ...process.env, SIGNALGATE_DATA_DIR: dataDir },
      stdio: 'ignore',
    });
    expect(await new Promise((resolve) => backup.on('close', resolve))).toBe(0);

    expect(modes(dataDir)).toEqual({
      '.': '700',
      'signalgate.db': '600',
      'signalgate.db-wal': '600',
      'signalgate.db-shm': '600',
      'server.lock': '600',
      'server.lock-journal': '600',
    });
    expect(modeOf(backupFile)).toBe('600');
    expect(warnings(server).filter((msg) => msg.includes('mode'))).toEqual([]);
  });

  it('a loosened directory or database is named at the next start, with the chmod that closes it', async () => {
    const dataDir = path.join(freshDir(), 'data');
    await stop(await start(dataDir));
    chmodSync(dataDir, 0o755);
    chmodSync(path.join(dataDir, 'signalgate.db'), 0o644);

    const server = await start(dataDir);
    expect(warnings(server)).toEqual([
      `${dataDir} is mode 0755, open to other users of this machine; run: chmod 0700 ${dataDir}`,
      `${path.join(dataDir, 'signalgate.db')} is mode 0644, open to other users of this machine; run: chmod 0600 ${path.join(dataDir, 'signalgate.db')}`,
    ]);
  });

  it('the service makes them private itself, whatever the umask of the process that starts it', async () => {
    const dataDir = path.join(freshDir(), 'data');
    const umask = process.umask(0o022);
    try {
      const service = await startService(
        {
          host: '127.0.0.1',
          port: 0,
          dataDir,
          databaseUrl: null,
          adminToken: ADMIN,
          publicUrl: 'http://signals.example.test',
          logLevel: 'silent',
          retentionMs: 86_400_000,
          tls: null,
          trustProxy: [],
        },
        pino({ level: 'silent' }),
      );
      await service.close();
    } finally {
      process.umask(umask);
    }
    expect(modes(dataDir)).toMatchObject({ '.': '700', 'signalgate.db': '600', 'server.lock': '600' });
  });
});
