import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { spawnServer } from '../support/spawn-server.js';
import { attachStrace, hasStrace } from '../support/strace.js';
import { RawSocket } from '../delivery/support/raw-socket.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const ADMIN = TEST_ADMIN_TOKEN;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * The ingest batch commits under `synchronous = NORMAL` (on the inbound thread, or on the event
 * loop with SIGNALGATE_INBOUND_THREAD=off, the choice with one CPU) and its WAL is
 * fdatasync-ed on the thread pool afterwards. What must hold is what a power cut would test:
 * the 202 for a signal leaves the process only after the WAL write that holds the signal is
 * on disk. strace shows the server's own system calls in order across its threads, so the
 * test reads that order rather than trusting the code.
 */
describe.skipIf(!hasStrace)('SQLite durability, traced with strace', () => {
  it.for(['on', 'off'])(
    'with SIGNALGATE_INBOUND_THREAD=%s writes the 202 for a signal, and pushes it to an agent, only after the WAL write holding it is fdatasync-ed',
    async (inboundThread) => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-durable-'));
      cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
      const server = await spawnServer({
        SIGNALGATE_DATA_DIR: dataDir,
        SIGNALGATE_ADMIN_TOKEN: ADMIN,
        SIGNALGATE_INBOUND_THREAD: inboundThread,
      });
      cleanups.push(async () => {
        server.child.kill('SIGKILL');
        await server.exited;
      });
      const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', {
        name: 'Ops',
        monthlySignalQuota: 1000,
      });
      const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', {
        accountId: account.body.id,
        name: 'alerts',
      });
      // The agents are told of a batch at its COMMIT, before its sync: the push must still wait for one.
      const agent = await adminRequest(server.url, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/agents`, {
        name: 'bot',
      });
      const socket = await RawSocket.open(server.url, agent.body.token);
      cleanups.push(() => socket.close());
      await socket.next((message) => message.type === 'hello');

      const trace = path.join(dataDir, 'strace.out');
      const strace = await attachStrace(server.child.pid!, trace, [
        '-s',
        '65536',
        '-e',
        'trace=pwrite64,write,writev,fdatasync,fsync',
      ]);

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
      // The window is 100 unacknowledged signals: all of them are pushed.
      await socket.waitForSignals(accepted);
      await strace.stop();

      const order = walOrder(readFileSync(trace, 'utf8'));
      expect(order.answered202).toBe(accepted);
      expect(order.walWrites).toBeGreaterThan(0);
      expect(order.walSyncs).toBeGreaterThan(0);
      expect(order.notFoundInWal).toEqual([]);
      expect(order.answeredBeforeSynced).toEqual([]);
      expect(order.pushed).toBe(accepted);
      expect(order.pushedBeforeSynced).toEqual([]);
    },
  );
});

/**
 * Reads an `strace -f -y` log in its order. Each 202 names its signal id; the first WAL write
 * whose page holds that id is where the signal was committed. The 202 is a violation unless an
 * fdatasync (or fsync) of the WAL that started after that write ended returned before it; so is
 * a WebSocket frame pushing the signal (`"type":"signals"`, unmasked from the server).
 */
function walOrder(log: string) {
  const lines = log.split('\n');
  const startedAt = new Map<string, number>();
  /** Signal id → index of the end of the first WAL write holding it. */
  const writtenAt = new Map<string, number>();
  const inFlightWrites = new Map<string, string>();
  /** Completed WAL syncs as [started, ended] line indexes. */
  const syncs: Array<[number, number]> = [];
  let walWrites = 0;
  let answered202 = 0;
  const notFoundInWal: string[] = [];
  const answeredBeforeSynced: string[] = [];
  let pushed = 0;
  const pushedBeforeSynced: string[] = [];
  const idsIn = (text: string) => [...new Set(text.match(/sig_[0-9a-z]{21}/g) ?? [])];
  /** A signal written out (answered or pushed) at line `index`: unless a WAL sync that began after its WAL write ended before, it goes to `unsynced`. */
  const checkSynced = (id: string, index: number, unsynced: string[]) => {
    const written = writtenAt.get(id);
    if (written === undefined) notFoundInWal.push(id);
    else if (!syncs.some(([started, ended]) => started > written && ended < index)) unsynced.push(id);
  };
  lines.forEach((line, index) => {
    const pid = line.split(/\s+/, 1)[0]!;
    const resumed = /<\.\.\. (\w+) resumed>/.exec(line);
    const call = resumed ? resumed[1]! : /^\d+\s+(\w+)\(/.exec(line)?.[1];
    if (call === undefined) return;
    const key = `${pid} ${call} wal`;
    const onWal = resumed ? startedAt.has(key) : line.includes('-wal>');
    const unfinished = line.includes('<unfinished ...>');
    if (call === 'pwrite64' && onWal) {
      if (!resumed) walWrites++;
      if (unfinished) {
        startedAt.set(key, index);
        inFlightWrites.set(key, line);
        return;
      }
      const text = resumed ? (inFlightWrites.get(key) ?? '') : line;
      startedAt.delete(key);
      inFlightWrites.delete(key);
      for (const id of idsIn(text)) if (!writtenAt.has(id)) writtenAt.set(id, index);
    } else if ((call === 'fdatasync' || call === 'fsync') && onWal) {
      if (unfinished) {
        startedAt.set(key, index);
        return;
      }
      const start = resumed ? startedAt.get(key)! : index;
      startedAt.delete(key);
      if (/= 0\s*$/.test(line)) syncs.push([start, index]);
    } else if ((call === 'writev' || call === 'write') && line.includes('"HTTP/1.1 202')) {
      answered202++;
      checkSynced(idsIn(line)[0] ?? `(no id in: ${line.slice(0, 80)})`, index, answeredBeforeSynced);
    } else if ((call === 'writev' || call === 'write') && line.includes('\\"type\\":\\"signals\\"')) {
      for (const id of idsIn(line)) {
        pushed++;
        checkSynced(id, index, pushedBeforeSynced);
      }
    }
  });
  return {
    walWrites,
    walSyncs: syncs.length,
    answered202,
    notFoundInWal,
    answeredBeforeSynced,
    pushed,
    pushedBeforeSynced,
  };
}
