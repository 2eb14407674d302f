import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { adminRequest, loggedSignalIds } from '../support/admin-client.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

// The data-directory lock exists on the embedded store only.
const onSqlite = process.env.SIGNALGATE_TEST_STORE !== 'postgres';
const ADMIN = TEST_ADMIN_TOKEN;
const ROUNDS = 20;
const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** Posts signals from 4 senders until told to stop or the server is gone; collects the ids answered 202. */
function sendUntilStopped(url: string, authKey: string, round: number, accepted: string[]) {
  let stop = false;
  const sender = async (w: number) => {
    for (let i = 0; !stop; i++) {
      try {
        const res = await fetch(`${url}/api/inbound/${authKey}`, {
          method: 'POST',
          headers: { 'content-type': 'text/plain' },
          body: `EURUSD,buy,vol=0.01,comment=r${round}-w${w}-${i}`,
        });
        if (res.status === 202) accepted.push(((await res.json()) as { id: string }).id);
        else await res.body?.cancel();
      } catch {
        return; // the server is gone
      }
    }
  };
  const senders = Array.from({ length: 4 }, (_, w) => sender(w));
  return async () => {
    stop = true;
    await Promise.all(senders);
  };
}

describe.runIf(onSqlite)('a server killed with SIGKILL', () => {
  // Inbound requests committed on the inbound thread, and on the event loop (the choice with one CPU).
  // The two run at once, each on a data directory of its own: each mostly waits on its restarts.
  it.concurrent.for(['on', 'off'])(
    `with SIGNALGATE_INBOUND_THREAD=%s is started again at once on the same data directory, ${ROUNDS} times, serving within 5 s and losing nothing acknowledged`,
    { timeout: 240_000 },
    async (inboundThread) => {
      const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-restart-'));
      dirs.push(dir);
      const env = { SIGNALGATE_DATA_DIR: dir, SIGNALGATE_ADMIN_TOKEN: ADMIN, SIGNALGATE_INBOUND_THREAD: inboundThread };
      let server: ServerProcess = await spawnServer(env);
      const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', {
        name: 'Ops',
        monthlySignalQuota: 1_000_000,
      });
      const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', {
        accountId: account.body.id,
        name: 'alerts',
      });
      const authKey = source.body.authKey as string;
      const accepted: string[] = [];
      try {
        for (let round = 0; round < ROUNDS; round++) {
          const before = accepted.length;
          const stopSending = sendUntilStopped(server.url, authKey, round, accepted);
          // Killed while signals are in flight, once some of this round's are acknowledged.
          while (accepted.length < before + 10) await new Promise((resolve) => setTimeout(resolve, 5));
          server.child.kill('SIGKILL');
          await server.exited;
          await stopSending();
          // What a supervisor does: start it again as soon as the old one has exited.
          const restarting = Date.now();
          server = await spawnServer(env);
          const health = await fetch(`${server.url}/healthz`);
          expect(health.status).toBe(200);
          expect(Date.now() - restarting, `round ${round}: serving again after`).toBeLessThan(5_000);
          expect(server.stdout()).not.toContain('took over');
        }
        const logged = await loggedSignalIds(server.url, ADMIN, source.body.id as string);
        expect(accepted.length).toBeGreaterThanOrEqual(ROUNDS * 10);
        expect(accepted.filter((id) => !logged.has(id))).toEqual([]);
      } finally {
        server.child.kill('SIGKILL');
        await server.exited;
      }
    },
  );

  it('does not free the directory for a second server while it is alive, even once another was refused', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-restart-'));
    dirs.push(dir);
    const env = { SIGNALGATE_DATA_DIR: dir, SIGNALGATE_ADMIN_TOKEN: ADMIN };
    const first = await spawnServer(env);
    try {
      for (let attempt = 0; attempt < 2; attempt++) {
        const second = await spawnServer(env).then(
          (s) => s,
          (error: Error) => error,
        );
        expect(second).toBeInstanceOf(Error);
        expect((second as Error).message).toContain(
          `signalgate: cannot start: another signalgate server (pid ${first.child.pid}) serves SIGNALGATE_DATA_DIR=${dir}; stop it, or give this server a data directory of its own`,
        );
      }
      expect((await fetch(`${first.url}/healthz`)).status).toBe(200);
    } finally {
      first.child.kill('SIGKILL');
      await first.exited;
    }
  });
});
