import { afterAll, describe, expect, it, vi } from 'vitest';
import { NotificationReceivers } from '../fakes/notification-receivers.js';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { spawnServer } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const ADMIN = TEST_ADMIN_TOKEN;
const onPostgres = process.env.SIGNALGATE_TEST_STORE === 'postgres';
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/**
 * Agents' presence is watched by one instance of several on one database (the holder of the
 * watch lease), so an agent gone is told once, not once per instance.
 */
describe.runIf(onPostgres)('the notifications watcher across two instances of one PostgreSQL database', () => {
  it('tells an agent gone, and back, once each', { timeout: 60_000 }, async () => {
    const receivers = await new NotificationReceivers().start();
    cleanups.push(() => receivers.close());
    const pg = await freshPostgresSchema('watcher');
    cleanups.push(() => pg.drop());
    const env = {
      SIGNALGATE_DATABASE_URL: pg.urlWithSchema,
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      SIGNALGATE_NOTIFY_AGENT_OFFLINE: '2s',
    };
    const servers = await Promise.all([spawnServer(env), spawnServer(env)]);
    for (const server of servers) cleanups.push(() => void server.child.kill('SIGKILL'));
    const [one, two] = servers.map((s) => s.url) as [string, string];
    const account = await adminRequest(one, ADMIN, 'POST', '/api/admin/accounts', {
      name: 'Desk',
      monthlySignalQuota: 100,
    });
    const agent = await adminRequest(one, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/agents`, {
      name: 'paper',
    });
    const channel = await adminRequest(one, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/channels`, {
      kind: 'webhook',
      name: 'pager',
      url: `${receivers.url}/hook`,
      events: ['agent_disconnected', 'agent_reconnected'],
    });
    const report = (url: string) =>
      fetch(`${url}/api/agent/state`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${agent.body.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ balance: 1000, equity: 1000, currency: 'USD', positions: [], orders: [] }),
      });

    // Seen through one instance, then silent past the 2 s: both instances see it gone.
    expect((await report(one)).status).toBe(200);
    await vi.waitFor(() => expect(receivers.of('webhook').length).toBeGreaterThanOrEqual(1), {
      timeout: 15_000,
      interval: 50,
    });
    // Back through the other instance.
    expect((await report(two)).status).toBe(200);
    await vi.waitFor(() => expect(receivers.of('webhook').map((r) => r.body.event)).toContain('agent_reconnected'), {
      timeout: 15_000,
      interval: 50,
    });
    // Both instances looked at presence several times between the two (every 0.5 s): the outbox
    // holds what each told, and it is one message of each.
    const messages = await adminRequest(two, ADMIN, 'GET', `/api/admin/channels/${channel.body.id}/messages`);
    expect(messages.body.messages.map((m: { event: string }) => m.event)).toEqual([
      'agent_reconnected',
      'agent_disconnected',
    ]);
    expect(receivers.of('webhook').map((r) => r.body.event)).toEqual(['agent_disconnected', 'agent_reconnected']);
  });
});
