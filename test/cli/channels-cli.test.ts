import { chmodSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { NotificationReceivers } from '../fakes/notification-receivers.js';
import { runCli, useCliStore } from '../support/cli-store.js';

const BOT_TOKEN = '123456:TEST-token';
const store = useCliStore();

describe('signalgate channels', () => {
  it('creates a Telegram channel with its token from a file, never prints it, and sends a test', async () => {
    const receivers = await new NotificationReceivers(BOT_TOKEN).start();
    store.cleanups.push(() => receivers.close());
    const env: Record<string, string> = { ...store.env, SIGNALGATE_TELEGRAM_API_URL: receivers.url };
    const account = JSON.parse((await runCli(env, 'accounts', 'create', '--name', 'Desk', '--quota', '10')).stdout);
    const tokenFile = path.join(env.SIGNALGATE_DATA_DIR!, 'bot-token');
    writeFileSync(tokenFile, `${BOT_TOKEN}\n`);
    chmodSync(tokenFile, 0o600);
    const made = await runCli(
      env,
      ...['channels', 'create', '--account', account.id, '--kind', 'telegram', '--name', 'phone'],
      ...['--chat-id', '4242', '--secret-file', tokenFile, '--events', 'signal_refused,quota_100'],
    );
    expect(made.code, made.stderr).toBe(0);
    const channel = JSON.parse(made.stdout);
    expect(channel).toMatchObject({
      kind: 'telegram',
      events: ['signal_refused', 'quota_100'],
      secretsSet: ['botToken'],
    });
    const listed = await runCli(env, 'channels', 'list', '--account', account.id);
    for (const out of [made.stdout, made.stderr, listed.stdout, listed.stderr]) expect(out).not.toContain(BOT_TOKEN);
    const tested = await runCli(env, 'channels', 'test', channel.id);
    expect(JSON.parse(tested.stdout)).toEqual({ sent: true, error: null });
    expect(receivers.of('telegram')[0]!.body).toMatchObject({ chat_id: '4242' });
    const wrong = await runCli(env, 'channels', 'update', channel.id, '--events', 'moon_landing');
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toMatch(/unknown event moon_landing/);
  });

  it('creates an e-mail channel with its SMTP password from a file, and names a bad setting', async () => {
    const env = store.env;
    const account = JSON.parse((await runCli(env, 'accounts', 'create', '--name', 'Desk', '--quota', '10')).stdout);
    const passwordFile = path.join(env.SIGNALGATE_DATA_DIR!, 'smtp-password');
    writeFileSync(passwordFile, 'app-password-1234\n');
    chmodSync(passwordFile, 0o600);
    const flags = ['--host', 'smtp.example.com', '--username', 'me@example.com', '--from', 'sg@example.com'];
    const made = await runCli(
      env,
      ...['channels', 'create', '--account', account.id, '--kind', 'email', '--name', 'mail', ...flags],
      ...['--to', 'me@example.com, desk@example.com', '--port', '587', '--secret-file', passwordFile],
    );
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({
      kind: 'email',
      settings: {
        host: 'smtp.example.com',
        port: 587,
        username: 'me@example.com',
        to: 'me@example.com, desk@example.com',
      },
      secretsSet: ['password'],
    });
    expect(made.stdout + made.stderr).not.toContain('app-password-1234');
    const bad = await runCli(
      env,
      ...['channels', 'create', '--account', account.id, '--kind', 'email', '--name', 'mail', ...flags],
      ...['--to', 'me@example.com', '--security', 'ssl', '--secret-file', passwordFile],
    );
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({
      param: 'security',
      detail: "'security' must be one of starttls, tls, none",
    });
  });
});
