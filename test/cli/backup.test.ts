import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { CLI, spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const onPostgres = process.env.SIGNALGATE_TEST_STORE === 'postgres';
const ADMIN = TEST_ADMIN_TOKEN;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function freshDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-backup-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** `signalgate backup FILE` as a process, without blocking this one (senders keep posting meanwhile). */
function backup(
  env: Record<string, string>,
  file: string,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, 'backup', file], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolve) =>
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    }),
  );
}

async function start(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer({ ...env, SIGNALGATE_ADMIN_TOKEN: ADMIN });
  cleanups.push(async () => {
    server.child.kill('SIGKILL');
    await server.exited;
  });
  return server;
}

describe.skipIf(onPostgres)('signalgate backup on the SQLite store', () => {
  it('copies the store while signals are being posted: the copy is intact and holds every signal acknowledged before it began', async () => {
    const dataDir = freshDir();
    const env = { SIGNALGATE_DATA_DIR: dataDir };
    const server = await start(env);
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', {
      name: 'Ops',
      monthlySignalQuota: 1_000_000,
    });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'alerts',
    });
    const accepted: string[] = [];
    let stop = false;
    const sender = async (w: number) => {
      for (let i = 0; !stop && i < 100_000; i++) {
        const res = await fetch(`${server.url}/api/inbound/${source.body.authKey}`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: `EURUSD,buy,vol=0.01,comment=w${w}-${i}`,
        });
        if (res.status === 202) accepted.push(((await res.json()) as { id: string }).id);
        else throw new Error(`inbound answered ${res.status}: ${await res.text()}`);
      }
    };
    const senders = Array.from({ length: 8 }, (_, w) => sender(w));
    try {
      while (accepted.length < 300) await new Promise((resolve) => setTimeout(resolve, 10));
      const before = [...accepted];
      const file = path.join(freshDir(), 'signalgate-backup.db');
      const run = await backup(env, file);
      const during = accepted.length - before.length;
      expect(run.stderr).toBe(`signalgate: store: SQLite ${path.join(env.SIGNALGATE_DATA_DIR!, 'signalgate.db')}\n`);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`backed up the store to ${file}`);
      // The senders went on while it ran: the copy was taken under load.
      expect(during).toBeGreaterThan(0);

      const copy = new Database(file, { readonly: true, fileMustExist: true });
      try {
        expect(copy.pragma('integrity_check', { simple: true })).toBe('ok');
        const ids = new Set(
          (copy.prepare('SELECT id FROM signals').all() as Array<{ id: string }>).map((row) => row.id),
        );
        expect(before.filter((id) => !ids.has(id))).toEqual([]);
        // Consistent: every copied signal was charged in the same copy.
        const used = copy.prepare('SELECT sum(used) AS used FROM usage').get() as { used: number };
        expect(used.used).toBe(ids.size);
      } finally {
        copy.close();
      }
      expect(readdirSync(path.dirname(file))).toEqual(['signalgate-backup.db']);
    } finally {
      stop = true;
      await Promise.all(senders);
    }
  }, 120_000);

  it('refuses to overwrite an existing file, or write where it cannot, and says what to do', async () => {
    const env = { SIGNALGATE_DATA_DIR: freshDir() };
    await start(env);
    const taken = path.join(freshDir(), 'taken.db');
    writeFileSync(taken, 'an earlier backup');
    const over = await backup(env, taken);
    expect(over.code).toBe(1);
    expect(over.stderr).toContain(
      `signalgate: ${taken} exists; give a file name that does not, so no earlier backup is overwritten`,
    );

    const nowhere = path.join(freshDir(), 'missing-dir', 'copy.db');
    const missing = await backup(env, nowhere);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`signalgate: cannot write the backup to ${nowhere}`);
    expect(missing.stderr).toContain('check that its directory exists');
    expect(existsSync(nowhere)).toBe(false);
  });
});

describe.runIf(onPostgres)('signalgate backup on PostgreSQL', () => {
  it('says to use pg_dump, and writes nothing', async () => {
    const pg = await freshPostgresSchema('backup');
    cleanups.push(() => pg.drop());
    // The server's store: on an empty schema the command would refuse before saying anything of pg_dump.
    await (await openStore({ dataDir: freshDir(), databaseUrl: pg.connectionString, schema: pg.schema })).close();
    const file = path.join(freshDir(), 'copy.db');
    const run = await backup({ SIGNALGATE_DATA_DIR: freshDir(), SIGNALGATE_DATABASE_URL: pg.urlWithSchema }, file);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('pg_dump --format=custom');
    expect(run.stderr).toContain('pg_restore');
    expect(existsSync(file)).toBe(false);
  });
});
