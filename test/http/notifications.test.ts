import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { NotificationReceivers } from '../fakes/notification-receivers.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';

const BOT_TOKEN = '123456:TEST-token';
const SIGNING_SECRET = 'hook-signing-secret';

describe('notifications through local Telegram, Discord, Slack and webhook receivers', () => {
  let receivers: NotificationReceivers;
  let server: TestServer;
  let accountId: string;
  let inboundUrl: string;
  const logs: string[] = [];
  const channelIds: Record<string, string> = {};

  beforeAll(async () => {
    receivers = await new NotificationReceivers(BOT_TOKEN).start();
    const logStream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        logs.push(chunk.toString());
        done();
      },
    });
    server = await startTestServer({
      logger: pino({ level: 'info' }, logStream),
      config: {
        notifications: { telegramApiUrl: receivers.url, perChannelPerMinute: 20, agentOfflineMs: 120_000 },
      },
    });
    accountId = (await server.admin('POST', '/api/admin/accounts', { name: 'Desk', monthlySignalQuota: 100 })).body.id;
    inboundUrl = (await server.admin('POST', '/api/admin/sources', { accountId, name: 'TradingView' })).body.inboundUrl;
    inboundUrl = inboundUrl.replace('http://signals.example.test', server.url);
  });

  afterAll(async () => {
    await server?.stop();
    await receivers?.close();
  });

  const channels = () => [
    { kind: 'telegram', name: 'phone', botToken: BOT_TOKEN, chatId: '4242' },
    { kind: 'discord', name: 'team', url: `${receivers.url}/api/webhooks/1234/discord-secret-token` },
    { kind: 'slack', name: 'ops', url: `${receivers.url}/services/T000/B000/slacksecret` },
    { kind: 'webhook', name: 'pager', url: `${receivers.url}/hook`, signingSecret: SIGNING_SECRET },
  ];

  it('creates a channel of each kind, and no answer shows a secret', async () => {
    for (const body of channels()) {
      const made = await server.admin('POST', `/api/admin/accounts/${accountId}/channels`, body);
      expect(made.status).toBe(201);
      channelIds[body.kind] = made.body.id;
      expect(made.body).toMatchObject({ kind: body.kind, enabled: true, state: { failures: 0, pending: 0 } });
      expect(made.body.events).toContain('signal_refused');
      const listed = await server.admin('GET', `/api/admin/channels?accountId=${accountId}`);
      for (const answer of [JSON.stringify(made.body), JSON.stringify(listed.body)]) {
        for (const secret of [BOT_TOKEN, 'discord-secret-token', 'slacksecret', SIGNING_SECRET, '/hook']) {
          expect(answer).not.toContain(secret);
        }
      }
    }
    expect((await server.admin('GET', `/api/admin/channels/${channelIds.telegram}`)).body).toMatchObject({
      settings: { chatId: '4242' },
      secretsSet: ['botToken'],
    });
  });

  it('refuses an e-mail field on another kind, an unknown event and a URL on Telegram, changing nothing', async () => {
    const email = await server.admin('POST', `/api/admin/accounts/${accountId}/channels`, {
      kind: 'slack',
      name: 'mail',
      url: `${receivers.url}/services/T000/B000/slacksecret`,
      host: 'smtp.example.com',
    });
    expect(email.status).toBe(422);
    expect(email.body).toMatchObject({ code: 'INVALID_FIELD', param: 'host' });
    expect(email.body.detail).toMatch(/'host' is not a field of a slack channel/);
    const bad = await server.admin('POST', `/api/admin/accounts/${accountId}/channels`, {
      kind: 'telegram',
      name: 'x',
      botToken: 't',
      chatId: '1',
      url: 'https://example.com',
      events: ['signal_refused', 'moon_landing'],
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { param: string }) => e.param).sort()).toEqual(['events', 'url']);
    const listed = await server.admin('GET', `/api/admin/channels?accountId=${accountId}`);
    expect(listed.body.channels).toHaveLength(4);
  });

  it('sends a test through each channel in its receiver’s own format', async () => {
    for (const kind of ['telegram', 'discord', 'slack', 'webhook']) {
      const sent = await server.admin('POST', `/api/admin/channels/${channelIds[kind]}/test`);
      expect(sent.body, kind).toEqual({ sent: true, error: null });
    }
    const [telegram] = receivers.of('telegram');
    expect(telegram!.body).toMatchObject({ chat_id: '4242' });
    expect(telegram!.body.text).toMatch(/^Test message: account /);
    expect(receivers.of('discord')[0]!.body.content).toMatch(/What to do: Nothing: this channel works\./);
    expect(receivers.of('slack')[0]!.body.blocks[0].text.text).toMatch(/^\*Test message/);
    const hook = receivers.of('webhook')[0]!;
    const expected = `sha256=${createHmac('sha256', SIGNING_SECRET).update(hook.raw).digest('hex')}`;
    expect(hook.headers['x-signature']).toBe(expected);
    expect(hook.body).toMatchObject({ event: 'test', count: 1 });
  });

  it('says what the receiver answered when a test fails, without the secret', async () => {
    const broken = await server.admin('POST', `/api/admin/accounts/${accountId}/channels`, {
      kind: 'telegram',
      name: 'wrong token',
      botToken: '999:WRONG-secret-token',
      chatId: '1',
    });
    const sent = await server.admin('POST', `/api/admin/channels/${broken.body.id}/test`);
    expect(sent.body).toEqual({ sent: false, error: 'HTTP 401 from the receiver: Unauthorized' });
    await server.admin('DELETE', `/api/admin/channels/${broken.body.id}`);
  });

  it('tells every channel of a refusal at once, then digests the burst that follows into one message', async () => {
    const before = receivers.received.length;
    const post = (body: string) =>
      fetch(inboundUrl, { method: 'POST', body, headers: { 'content-type': 'text/plain' } });
    expect((await post('EURUSD,buy,vol=0.1,sl=20')).status).toBe(422);
    await vi.waitFor(() => expect(receivers.received.length - before).toBe(4), { timeout: 5000, interval: 50 });
    const telegram = receivers.of('telegram').at(-1)!;
    expect(telegram.body.text).toMatch(/^Signal refused at the door: source src_/);
    expect(telegram.body.text).toMatch(/code: UNKNOWN_PARAMETER/);
    expect(telegram.body.text).toMatch(/What to do: Check the sender/);
    expect(telegram.body.text).toMatch(/http:\/\/signals\.example\.test\/#sources\/src_/);
    for (let i = 0; i < 30; i++) await (await post(`EURUSD,buy,vol=0.1,nonsense${i}=1`)).body?.cancel();
    await vi.waitFor(
      async () => {
        const messages = await server.admin('GET', `/api/admin/channels/${channelIds.slack}/messages`);
        expect(messages.body.messages[0]).toMatchObject({ event: 'signal_refused', count: 30, state: 'pending' });
      },
      { timeout: 3000, interval: 100 },
    );
    // Held for the minute: nothing more reached the receivers.
    expect(receivers.received.length - before).toBe(4);
  });

  it('never writes a secret into the log', () => {
    const log = logs.join('');
    expect(log).toContain('notification sent through telegram');
    for (const secret of [BOT_TOKEN, 'discord-secret-token', 'slacksecret', SIGNING_SECRET, 'WRONG-secret']) {
      expect(log).not.toContain(secret);
    }
  });
});
