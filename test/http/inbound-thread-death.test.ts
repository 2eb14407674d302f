import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';

const ADMIN = 'thread-death-admin-token-abcdef';
const CRASH_FIXTURE = path.resolve('test/fixtures/crash-inbound-thread.mjs');
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function start(env: Record<string, string>, nodeArgs: string[] = []): Promise<ServerProcess> {
  const server = await spawnServer(env, nodeArgs);
  cleanups.push(async () => {
    if (server.child.exitCode === null && server.child.signalCode === null) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  });
  return server;
}

/** Every raw body in a source's signal log, page by page. */
async function loggedBodies(url: string, sourceId: string): Promise<Map<string, string>> {
  const bodies = new Map<string, string>();
  let before = '';
  for (;;) {
    const page = await adminRequest(url, ADMIN, 'GET', `/api/admin/signals?sourceId=${sourceId}&limit=500${before}`);
    for (const s of page.body.signals as Array<{ id: string; rawBody: string }>) bodies.set(s.rawBody, s.id);
    if (page.body.next === null) return bodies;
    before = `&before=${page.body.next}`;
  }
}

type Outcome = { body: string; kind: 'accepted'; id: string } | { body: string; kind: 'refused' | 'broken' };

// The inbound thread exists on the embedded store only; on PostgreSQL inbound work stays on the event loop.
describe.skipIf(process.env.SIGNALGATE_TEST_STORE === 'postgres')('when the inbound thread dies under load', () => {
  it('keeps every 202, stores nothing it refused, answers 500 and reports failing until restarted', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-thread-death-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const env = { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: ADMIN };
    const server = await start(env, ['--import', CRASH_FIXTURE]);
    const account = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/accounts', { name: 'Ops', monthlySignalQuota: 1_000_000 });
    const source = await adminRequest(server.url, ADMIN, 'POST', '/api/admin/sources', { accountId: account.body.id, name: 'alerts' });
    const sourceId = source.body.id as string;

    const outcomes: Outcome[] = [];
    const count = (kind: Outcome['kind']) => outcomes.filter((o) => o.kind === kind).length;
    let stop = false;
    const sender = async (w: number) => {
      for (let i = 0; !stop; i++) {
        const body = `EURUSD,buy,vol=0.01,comment=w${w}-${i}`;
        try {
          const res = await fetch(`${server.url}/api/inbound/${source.body.authKey}`, {
            method: 'POST',
            headers: { 'content-type': 'text/plain' },
            body,
          });
          const answer = (await res.json()) as { id?: string; code?: string };
          if (res.status === 202) outcomes.push({ body, kind: 'accepted', id: answer.id! });
          else if (res.status === 500 && answer.code === 'INTERNAL_ERROR') outcomes.push({ body, kind: 'refused' });
          else throw new Error(`unexpected answer ${res.status} ${JSON.stringify(answer)}`);
        } catch (error) {
          if (error instanceof Error && error.message.startsWith('unexpected answer')) throw error;
          outcomes.push({ body, kind: 'broken' }); // the connection closed unanswered
        }
      }
    };
    const senders = Array.from({ length: 32 }, (_, w) => sender(w));
    while (count('accepted') < 300) await new Promise((resolve) => setTimeout(resolve, 10));
    server.child.kill('SIGUSR2');
    while (count('refused') < 100) await new Promise((resolve) => setTimeout(resolve, 10));
    stop = true;
    await Promise.all(senders);

    const health = await fetch(`${server.url}/healthz`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ status: 'failing', store: 'sqlite' });
    const fatal = server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { level: number; msg: string })
      .filter((entry) => entry.level === 60);
    expect(fatal.map((entry) => entry.msg)).toEqual([
      'the inbound thread stopped; every inbound request now fails until the service is restarted',
    ]);

    // Checked on the failing server (the admin API still reads the file) and after a restart,
    // when everything on disk is what agents would be handed.
    const check = async (url: string) => {
      const logged = await loggedBodies(url, sourceId);
      const lost = outcomes.filter((o) => o.kind === 'accepted' && logged.get(o.body) !== o.id);
      const storedThoughRefused = outcomes.filter((o) => o.kind === 'refused' && logged.has(o.body));
      expect(lost).toEqual([]);
      expect(storedThoughRefused).toEqual([]);
      return logged;
    };
    await check(server.url);
    server.child.kill('SIGTERM');
    expect(await server.exited).toEqual({ code: 0, signal: null });

    const restarted = await start(env);
    const logged = await check(restarted.url);
    const usage = await adminRequest(restarted.url, ADMIN, 'GET', `/api/admin/accounts/${account.body.id}/usage`);
    expect(usage.body.used).toBe(logged.size);
    const after = await fetch(`${restarted.url}/api/inbound/${source.body.authKey}`, { method: 'POST', body: 'EURUSD,buy' });
    expect(after.status).toBe(202);
  });
});
