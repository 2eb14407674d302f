import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { spawnServer } from '../support/spawn-server.js';
import { attachStrace, hasStrace } from '../support/strace.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const ADMIN = TEST_ADMIN_TOKEN;
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/**
 * A WAL checkpoint copies the WAL into the database file and syncs both, on the thread whose
 * COMMIT ran it. With an inbound thread, the event loop must never be that thread while signals
 * arrive: every request waits while the event loop is stopped. The agent's acks commit on the
 * event loop's connection as often as the signals on the inbound thread's, so both would cross
 * the WAL's 1,000 pages. In WAL mode only a checkpoint syncs the database file, so strace
 * says which thread ran each.
 */
describe.skipIf(!hasStrace)('SQLite checkpoints beside an inbound thread, traced with strace', () => {
  it('runs every checkpoint on the inbound thread while signals arrive and an agent acknowledges them', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-checkpoints-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await spawnServer({
      SIGNALGATE_DATA_DIR: dataDir,
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      SIGNALGATE_INBOUND_THREAD: 'on',
    });
    cleanups.push(async () => {
      server.child.kill('SIGKILL');
      await server.exited;
    });
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', {
      name: 'Ops',
      monthlySignalQuota: 100_000,
    });
    const agent = await adminRequest(server.url, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/agents`, {
      name: 'paper',
    });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', {
      accountId: account.body.id,
      name: 'alerts',
    });
    const agentAuth = { authorization: `Bearer ${agent.body.token}` };

    const trace = path.join(dataDir, 'strace.out');
    const strace = await attachStrace(server.child.pid!, trace, ['-e', 'trace=fsync,fdatasync']);

    // Until the WAL has been checkpointed a few times (about 1,000 pages each), the agent
    // acknowledging one round while the next round's signals arrive, as a live agent does.
    const checkpoints = () => databaseSyncs(readFileSync(trace, 'utf8'));
    const post = (body: string) =>
      fetch(`${server.url}/api/inbound/${source.body.authKey}`, {
        method: 'POST',
        headers: { 'content-type': 'text/plain' },
        body,
      }).then((res) => res.status);
    const ack = (id: string) =>
      fetch(`${server.url}/api/agent/signals/${id}/ack`, {
        method: 'POST',
        headers: { ...agentAuth, 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'executed' }),
      }).then((res) => res.status);
    let held: string[] = [];
    for (let round = 0; round < 400 && checkpoints().length < 6; round++) {
      const [statuses, acks] = await Promise.all([
        Promise.all(
          Array.from({ length: 20 }, (_, i) => post(`EURUSD,buy,vol=0.${(i % 9) + 1},sl_pips=20,comment=r${round}`)),
        ),
        Promise.all(held.map(ack)),
      ]);
      expect(statuses.every((status) => status === 202)).toBe(true);
      expect(acks.every((status) => status === 200)).toBe(true);
      const polled = (await (await fetch(`${server.url}/api/agent/signals?wait=0`, { headers: agentAuth })).json()) as {
        signals: Array<{ id: string }>;
      };
      held = polled.signals.map((signal) => signal.id);
    }
    await strace.stop();

    const syncs = databaseSyncs(readFileSync(trace, 'utf8'));
    expect(syncs.length).toBeGreaterThanOrEqual(6);
    // strace -f names the main thread (the event loop) by the process id.
    expect(syncs.filter((thread) => thread === server.child.pid)).toEqual([]);
  }, 120_000);
});

/** The thread of each sync of the database file (not its WAL) in an `strace -f -y` log. */
function databaseSyncs(log: string): number[] {
  return log
    .split('\n')
    .filter((line) => /\b(fsync|fdatasync)\(\d+<[^>]*\/signalgate\.db>/.test(line))
    .map((line) => Number(line.split(/\s+/, 1)[0]));
}
