import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { DEFAULT_NOTIFICATION_SETTINGS } from '../../src/config/config.js';
import { NotificationReceivers } from '../fakes/notification-receivers.js';
import { adminRequest } from '../support/admin-client.js';
import { freshPostgresSchema } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { startTestServer } from '../support/start-test-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const ADMIN = TEST_ADMIN_TOKEN;
const onPostgres = process.env.SIGNALGATE_TEST_STORE === 'postgres';
const cleanups: Array<() => Promise<void> | void> = [];
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function receiversUp(): Promise<NotificationReceivers> {
  const receivers = await new NotificationReceivers().start();
  cleanups.push(() => receivers.close());
  return receivers;
}

function dataDir(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-notify-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A short retry schedule (SIGNALGATE_NOTIFY_RETRY), so back-offs take a second, not minutes. */
const RETRY = { SIGNALGATE_NOTIFY_RETRY: '200ms,1s' };

async function serve(env: Record<string, string>): Promise<ServerProcess> {
  const server = await spawnServer({ ...RETRY, ...env });
  cleanups.push(() => {
    server.child.kill('SIGKILL');
  });
  return server;
}

/** An account whose quota is `quota`, a source and a webhook channel to the receivers; answers the inbound URL. */
async function setUp(url: string, receivers: NotificationReceivers, quota: number) {
  const account = await adminRequest(url, ADMIN, 'POST', '/api/admin/accounts', {
    name: 'Desk',
    monthlySignalQuota: quota,
  });
  const source = await adminRequest(url, ADMIN, 'POST', '/api/admin/sources', {
    accountId: account.body.id,
    name: 'tv',
  });
  const channel = await adminRequest(url, ADMIN, 'POST', `/api/admin/accounts/${account.body.id}/channels`, {
    kind: 'webhook',
    name: 'pager',
    url: `${receivers.url}/hook`,
  });
  expect(channel.status).toBe(201);
  return { inbound: source.body.inboundUrl as string, channelId: channel.body.id as string };
}

const send = async (inbound: string, body: string) =>
  (await fetch(inbound, { method: 'POST', body, headers: { 'content-type': 'text/plain' } })).status;

describe.runIf(!onPostgres)('the notification outbox on one server', () => {
  it('delivers a message once after the server was killed with it pending', { timeout: 60_000 }, async () => {
    const receivers = await receiversUp();
    receivers.down();
    const env = { SIGNALGATE_DATA_DIR: dataDir(), SIGNALGATE_ADMIN_TOKEN: ADMIN };
    let server = await serve(env);
    const { inbound, channelId } = await setUp(server.url, receivers, 100);
    expect(await send(inbound, 'EURUSD,buy,vol=0.1,sl=20')).toBe(422);
    await vi.waitFor(
      async () => {
        const messages = await adminRequest(server.url, ADMIN, 'GET', `/api/admin/channels/${channelId}/messages`);
        expect(messages.body.messages[0]).toMatchObject({ state: 'pending', attempts: 1 });
      },
      { timeout: 10_000, interval: 100 },
    );
    server.child.kill('SIGKILL');
    await server.exited;
    receivers.up();
    server = await serve(env);
    await vi.waitFor(() => expect(receivers.of('webhook')).toHaveLength(1), { timeout: 20_000, interval: 100 });
    expect(receivers.of('webhook')[0]!.body).toMatchObject({ event: 'signal_refused', count: 1 });
    // Settled as sent: no instance may send it again, and it was received once.
    await vi.waitFor(
      async () => {
        const messages = await adminRequest(server.url, ADMIN, 'GET', `/api/admin/channels/${channelId}/messages`);
        expect(messages.body.messages).toEqual([expect.objectContaining({ state: 'sent' })]);
      },
      { timeout: 10_000, interval: 50 },
    );
    expect(receivers.of('webhook')).toHaveLength(1);
  });

  it(
    'delivers in order what waited while the receiver was down through several retries',
    { timeout: 60_000 },
    async () => {
      const receivers = await receiversUp();
      // In this process (no restart here), with the same short retry schedule.
      const server = await startTestServer({
        config: {
          notifications: {
            ...DEFAULT_NOTIFICATION_SETTINGS,
            retry: { firstMs: 200, maxMs: 1000 },
          },
        },
      });
      cleanups.push(() => server.stop());
      const made = await setUp(server.url, receivers, 5);
      const { channelId } = made;
      const inbound = made.inbound.replace('http://signals.example.test', server.url);
      receivers.down();
      // The 4th signal reaches 80 % of the quota of 5, the 5th 100 %, the 6th is refused for it.
      for (let i = 0; i < 6; i++) await send(inbound, `EURUSD,buy,vol=0.1,comment=n${i}`);
      // Down until the channel has failed 3 times in a row (backing off 0.2, 0.4, 0.8 s).
      await vi.waitFor(
        async () => {
          const waiting = await adminRequest(server.url, ADMIN, 'GET', `/api/admin/channels/${channelId}`);
          expect(waiting.body.state).toMatchObject({
            pending: 3,
            lastError: 'HTTP 503 from the receiver: down for maintenance',
          });
          expect(waiting.body.state.failures).toBeGreaterThanOrEqual(3);
        },
        { timeout: 20_000, interval: 100 },
      );
      expect(receivers.of('webhook')).toHaveLength(0);
      receivers.up();
      await vi.waitFor(() => expect(receivers.of('webhook')).toHaveLength(3), { timeout: 60_000, interval: 200 });
      expect(receivers.of('webhook').map((r) => r.body.event)).toEqual(['quota_80', 'quota_100', 'signal_refused']);
      const after = await adminRequest(server.url, ADMIN, 'GET', `/api/admin/channels/${channelId}`);
      expect(after.body.state).toMatchObject({ pending: 0, failures: 0, failingSince: null });
    },
  );
});

describe.runIf(onPostgres)('the notification outbox on two instances of one PostgreSQL database', () => {
  it('sends each of 30 messages to 10 channels once', { timeout: 60_000 }, async () => {
    const receivers = await receiversUp();
    const pg = await freshPostgresSchema('notify');
    cleanups.push(() => pg.drop());
    const env = { SIGNALGATE_DATABASE_URL: pg.urlWithSchema, SIGNALGATE_ADMIN_TOKEN: ADMIN };
    const [one, two] = await Promise.all([serve(env), serve(env)]);
    const { inbound } = await setUp(one!.url, receivers, 5);
    const accountId = (await adminRequest(one!.url, ADMIN, 'GET', '/api/admin/channels')).body.channels[0].accountId;
    for (let i = 1; i < 10; i++) {
      await adminRequest(one!.url, ADMIN, 'POST', `/api/admin/accounts/${accountId}/channels`, {
        kind: 'webhook',
        name: `pager ${i}`,
        url: `${receivers.url}/hook`,
      });
    }
    const inboundTwo = inbound.replace(new URL(inbound).origin, two!.url);
    // By turns through both instances: the 4th reaches 80 % of 5, the 5th 100 %, the 6th is refused.
    for (let i = 0; i < 6; i++) await send(i % 2 === 0 ? inbound : inboundTwo, `EURUSD,buy,vol=0.1,comment=n${i}`);
    await vi.waitFor(() => expect(receivers.of('webhook').length).toBeGreaterThanOrEqual(30), {
      timeout: 20_000,
      interval: 100,
    });
    // Every message settled as sent (none waiting, none leased for a resend): what came is all that comes.
    await vi.waitFor(
      async () => {
        const { channels } = (await adminRequest(two!.url, ADMIN, 'GET', '/api/admin/channels')).body;
        expect(channels.map((c: { state: { pending: number } }) => c.state.pending)).toEqual(Array(10).fill(0));
      },
      { timeout: 10_000, interval: 100 },
    );
    const received = receivers.of('webhook');
    const ids = received.map((r) => r.headers['x-signalgate-delivery']);
    expect(ids).toHaveLength(30);
    expect(new Set(ids).size).toBe(30);
    const events = received.map((r) => r.body.event as string);
    expect(events.filter((e) => e === 'quota_80')).toHaveLength(10);
    expect(events.filter((e) => e === 'quota_100')).toHaveLength(10);
    expect(events.filter((e) => e === 'signal_refused')).toHaveLength(10);
  });
});
