import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { spawnServer } from '../support/spawn-server.js';

const ADMIN = 'durability-test-admin-token-abc';
const hasStrace = spawnSync('strace', ['-V']).status === 0;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The ingest batch commits under `synchronous = NORMAL` and its WAL is fdatasync-ed on the
 * thread pool afterwards. What must hold is what a power cut would test: no 202 leaves the
 * process while a WAL write is not yet on disk. strace shows the server's own system calls
 * in order across its threads, so the test reads that order rather than trusting the code.
 */
describe.skipIf(!hasStrace)('SQLite durability, traced with strace', () => {
  it('writes no 202 to a socket before every WAL write before it is fdatasync-ed', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-durable-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await spawnServer({ SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: ADMIN });
    cleanups.push(async () => {
      server.child.kill('SIGKILL');
      await server.exited;
    });
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', { name: 'Ops', monthlySignalQuota: 1000 });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', { accountId: account.body.id, name: 'alerts' });

    const trace = path.join(dataDir, 'strace.out');
    const strace = spawn(
      'strace',
      ['-f', '-y', '-s', '24', '-e', 'trace=pwrite64,write,writev,fdatasync,fsync', '-o', trace, '-p', String(server.child.pid)],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    await new Promise<void>((resolve, reject) => {
      let said = '';
      strace.stderr!.on('data', (chunk: Buffer) => {
        said += chunk.toString();
        if (said.includes('attached')) resolve();
      });
      strace.once('exit', (code) => reject(new Error(`strace exited with ${code}: ${said}`)));
    });

    let accepted = 0;
    for (let round = 0; round < 4; round++) {
      const statuses = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          fetch(`${server.url}/api/inbound/${source.body.authKey}`, {
            method: 'POST',
            headers: { 'content-type': 'text/plain' },
            body: `EURUSD,buy,vol=0.${(i % 9) + 1},sl_pips=20`,
          }).then((res) => res.status),
        ),
      );
      expect(statuses.every((status) => status === 202)).toBe(true);
      accepted += statuses.length;
    }
    const exited = new Promise((resolve) => strace.once('exit', resolve));
    strace.kill('SIGINT');
    await exited;

    const order = walOrder(readFileSync(trace, 'utf8'));
    expect(order.answered202).toBe(accepted);
    expect(order.walWrites).toBeGreaterThan(0);
    expect(order.walSyncs).toBeGreaterThan(0);
    expect(order.answeredWhileUnsynced).toEqual([]);
  });
});

/**
 * Reads an `strace -f -y` log in its order. A WAL write counts from its start until an
 * fdatasync (or fsync) of the WAL that started after the write ended has returned; a 202
 * written in between is a violation.
 */
function walOrder(log: string) {
  const lines = log.split('\n');
  const startedAt = new Map<string, number>();
  let lastWalWriteEnd = -1;
  let walWriteInFlight = 0;
  let syncedUpTo = -1;
  let walWrites = 0;
  let walSyncs = 0;
  let answered202 = 0;
  const answeredWhileUnsynced: string[] = [];
  lines.forEach((line, index) => {
    const pid = line.split(/\s+/, 1)[0]!;
    const resumed = /<\.\.\. (\w+) resumed>/.exec(line);
    const call = resumed ? resumed[1]! : /^\d+\s+(\w+)\(/.exec(line)?.[1];
    if (call === undefined) return;
    const onWal = resumed ? startedAt.has(`${pid} ${call} wal`) : line.includes('-wal>');
    const unfinished = line.includes('<unfinished ...>');
    if (call === 'pwrite64' && onWal) {
      if (!resumed) walWrites++;
      if (unfinished) {
        walWriteInFlight++;
        startedAt.set(`${pid} ${call} wal`, index);
      } else {
        if (resumed) {
          walWriteInFlight--;
          startedAt.delete(`${pid} ${call} wal`);
        }
        lastWalWriteEnd = index;
      }
    } else if ((call === 'fdatasync' || call === 'fsync') && onWal) {
      if (unfinished) {
        startedAt.set(`${pid} ${call} wal`, index);
        return;
      }
      const start = resumed ? startedAt.get(`${pid} ${call} wal`)! : index;
      startedAt.delete(`${pid} ${call} wal`);
      if (/= 0\s*$/.test(line)) {
        walSyncs++;
        syncedUpTo = Math.max(syncedUpTo, start);
      }
    } else if ((call === 'writev' || call === 'write') && line.includes('"HTTP/1.1 202')) {
      answered202++;
      if (walWriteInFlight > 0 || lastWalWriteEnd > syncedUpTo) answeredWhileUnsynced.push(line);
    }
  });
  return { walWrites, walSyncs, answered202, answeredWhileUnsynced };
}
