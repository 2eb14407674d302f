import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SmtpReceiver } from '../fakes/smtp-receiver.js';
import { adminRequest } from '../support/admin-client.js';
import { makeCertificate } from '../support/https-client.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const ADMIN = TEST_ADMIN_TOKEN;
const PASSWORD = 'app-password-1234';
const onSqlite = process.env.SIGNALGATE_TEST_STORE !== 'postgres';

/**
 * E-mail notifications through real SMTP servers (`smtp-server`) on this machine: STARTTLS and
 * TLS from the start with a login, the server from dist/ trusting their certificate through
 * NODE_EXTRA_CA_CERTS as an operator with a private CA would.
 */
describe.runIf(onSqlite)('e-mail notifications over SMTP', () => {
  let dir: string;
  let server: ServerProcess;
  let startTls: SmtpReceiver;
  let implicitTls: SmtpReceiver;
  let plainOnly: SmtpReceiver;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-email-'));
    const cert = makeCertificate(dir, 'smtp');
    const tls = { key: readFileSync(cert.keyFile, 'utf8'), cert: cert.pem };
    const login = { user: 'sg@example.com', pass: PASSWORD };
    [startTls, implicitTls, plainOnly] = await Promise.all([
      new SmtpReceiver({ tls, login }).start(),
      new SmtpReceiver({ tls, login, secure: true }).start(),
      new SmtpReceiver({ tls, login, noStartTls: true }).start(),
    ]);
    server = await spawnServer({
      SIGNALGATE_DATA_DIR: path.join(dir, 'data'),
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      NODE_EXTRA_CA_CERTS: cert.certFile,
      SIGNALGATE_PUBLIC_URL: 'http://signals.example.test',
      SIGNALGATE_NOTIFY_RETRY: '300ms,2s',
    });
  });

  afterAll(async () => {
    server?.child.kill('SIGKILL');
    await Promise.all([startTls, implicitTls, plainOnly].map((r) => r?.close()));
    rmSync(dir, { recursive: true, force: true });
  });

  const admin = (method: string, urlPath: string, body?: unknown) =>
    adminRequest(server.url, ADMIN, method, urlPath, body);

  /** An account with a source; answers its id and inbound URL. */
  const account = async (name: string) => {
    const made = await admin('POST', '/api/admin/accounts', { name, monthlySignalQuota: 100 });
    const source = await admin('POST', '/api/admin/sources', { accountId: made.body.id, name: 'tv' });
    const inbound = (source.body.inboundUrl as string).replace('http://signals.example.test', server.url);
    return { id: made.body.id as string, inbound, sourceId: source.body.id as string };
  };

  const mailChannel = (receiver: SmtpReceiver, extra: Record<string, unknown> = {}) => ({
    kind: 'email',
    name: 'mail',
    host: '127.0.0.1',
    port: receiver.port,
    username: 'sg@example.com',
    password: PASSWORD,
    from: 'signalgate@example.com',
    to: 'trader@example.com, desk@example.com',
    ...extra,
  });

  it('sends a test and an event over STARTTLS with a login: subject, text and recipients as sent', async () => {
    const desk = await account('Desk');
    const made = await admin('POST', `/api/admin/accounts/${desk.id}/channels`, mailChannel(startTls));
    expect(made.status).toBe(201);
    expect(made.body).toMatchObject({
      kind: 'email',
      settings: { host: '127.0.0.1', port: startTls.port, username: 'sg@example.com', to: expect.any(String) },
      secretsSet: ['password'],
    });
    expect(JSON.stringify(made.body)).not.toContain(PASSWORD);

    const tested = await admin('POST', `/api/admin/channels/${made.body.id}/test`);
    expect(tested.body).toEqual({ sent: true, error: null });
    expect(startTls.mails).toHaveLength(1);
    const test = startTls.mails[0]!;
    expect(test).toMatchObject({
      mailFrom: 'signalgate@example.com',
      rcptTo: ['trader@example.com', 'desk@example.com'],
      secure: true,
      user: 'sg@example.com',
      subject: `[signalgate] Test message: account ${desk.id}`,
    });
    expect(test.headers.to).toBe('trader@example.com, desk@example.com');
    expect(test.text).toContain('What to do: Nothing: this channel works.');

    expect((await fetch(desk.inbound, { method: 'POST', body: 'EURUSD,buy,vol=0.1,sl=20' })).status).toBe(422);
    await vi.waitFor(() => expect(startTls.mails).toHaveLength(2), { timeout: 10_000, interval: 50 });
    const event = startTls.mails[1]!;
    expect(event.subject).toBe(`[signalgate] Signal refused at the door: source ${desk.sourceId}`);
    expect(event.text).toMatch(/code: UNKNOWN_PARAMETER/);
    expect(event.text).toContain(`http://signals.example.test/#sources/${desk.sourceId}`);
    expect(event.rcptTo).toEqual(['trader@example.com', 'desk@example.com']);
  });

  it('sends over TLS from the start, and refuses to send a password where STARTTLS is not offered', async () => {
    const desk = await account('TLS desk');
    const tls = await admin(
      'POST',
      `/api/admin/accounts/${desk.id}/channels`,
      mailChannel(implicitTls, { security: 'tls', to: 'trader@example.com' }),
    );
    expect((await admin('POST', `/api/admin/channels/${tls.body.id}/test`)).body).toEqual({ sent: true, error: null });
    expect(implicitTls.mails[0]).toMatchObject({ secure: true, rcptTo: ['trader@example.com'] });

    const plain = await admin('POST', `/api/admin/accounts/${desk.id}/channels`, mailChannel(plainOnly));
    const refused = await admin('POST', `/api/admin/channels/${plain.body.id}/test`);
    expect(refused.body.sent).toBe(false);
    expect(refused.body.error).toMatch(new RegExp(`^no STARTTLS at 127\\.0\\.0\\.1:${plainOnly.port}`));
    expect(refused.body.error).not.toContain(PASSWORD);
    expect(plainOnly.mails).toHaveLength(0);

    const wrongPassword = await admin(
      'POST',
      `/api/admin/accounts/${desk.id}/channels`,
      mailChannel(startTls, { password: 'not-the-password' }),
    );
    const denied = await admin('POST', `/api/admin/channels/${wrongPassword.body.id}/test`);
    expect(denied.body).toEqual({
      sent: false,
      error: expect.stringMatching(
        new RegExp(`^SMTP 535 from 127\\.0\\.0\\.1:${startTls.port}: .*credentials invalid`),
      ),
    });
  });

  it('reports a 550 refusal on the channel, retries it, and delivers once the mailbox takes it', async () => {
    const desk = await account('Refused desk');
    startTls.refused.add('gone@example.com');
    const made = await admin(
      'POST',
      `/api/admin/accounts/${desk.id}/channels`,
      mailChannel(startTls, { to: 'gone@example.com', events: ['signal_refused'] }),
    );
    const before = startTls.mails.length;
    await fetch(desk.inbound, { method: 'POST', body: 'EURUSD,buy,vol=0.1,sl=20' });
    await vi.waitFor(
      async () => {
        const channel = await admin('GET', `/api/admin/channels/${made.body.id}`);
        expect(channel.body.state).toMatchObject({ pending: 1, failingSince: expect.any(String) });
        expect(channel.body.state.failures).toBeGreaterThanOrEqual(2);
        expect(channel.body.state.lastError).toBe(
          `SMTP 550 from 127.0.0.1:${startTls.port}: 550 5.1.1 mailbox unavailable`,
        );
      },
      { timeout: 10_000, interval: 50 },
    );
    const messages = await admin('GET', `/api/admin/channels/${made.body.id}/messages`);
    expect(messages.body.messages[0]).toMatchObject({ event: 'signal_refused', state: 'pending' });
    expect(messages.body.messages[0].attempts).toBeGreaterThanOrEqual(2);
    startTls.refused.delete('gone@example.com');
    await vi.waitFor(() => expect(startTls.mails.length).toBe(before + 1), { timeout: 10_000, interval: 50 });
    expect(startTls.mails.at(-1)).toMatchObject({ rcptTo: ['gone@example.com'] });
    await vi.waitFor(
      async () => {
        const channel = await admin('GET', `/api/admin/channels/${made.body.id}`);
        expect(channel.body.state).toMatchObject({ pending: 0, failures: 0, failingSince: null });
      },
      { timeout: 5_000, interval: 50 },
    );
  });

  it('refuses bad settings with one error per field, and keeps nothing', async () => {
    const desk = await account('Bad desk');
    const bad = await admin('POST', `/api/admin/accounts/${desk.id}/channels`, {
      kind: 'email',
      name: 'mail',
      host: 'smtp://mail.example.com:587',
      security: 'ssl',
      username: 'me',
      from: 'not an address',
      to: 'a@example.com, nobody',
    });
    expect(bad.status).toBe(422);
    const byField = Object.fromEntries(
      (bad.body.errors ?? [bad.body]).map((e: { param: string; detail: string }) => [e.param, e.detail]),
    );
    expect(byField.security).toMatch(/must be one of starttls, tls, none/);
    expect(Object.keys(byField)).toEqual(['security']);

    const second = await admin('POST', `/api/admin/accounts/${desk.id}/channels`, {
      kind: 'email',
      name: 'mail',
      host: 'smtp://mail.example.com:587',
      username: 'me',
      from: 'not an address',
      to: 'a@example.com, nobody',
    });
    const fields = Object.fromEntries(
      (second.body.errors ?? [second.body]).map((e: { param: string; detail: string }) => [e.param, e.detail]),
    );
    expect(fields).toEqual({
      host: expect.stringMatching(/without scheme or port/),
      from: "'from' must be an e-mail address, got 'not an address'",
      to: "'to' must be e-mail addresses separated by commas; not one: 'nobody'",
      password: "an e-mail channel with a 'username' needs its 'password'",
    });
    const clear = await admin('POST', `/api/admin/accounts/${desk.id}/channels`, {
      ...mailChannel(startTls),
      security: 'none',
    });
    expect(clear.status).toBe(422);
    expect(clear.body).toMatchObject({ param: 'security', detail: expect.stringMatching(/in clear/) });
    expect((await admin('GET', `/api/admin/channels?accountId=${desk.id}`)).body.channels).toEqual([]);
  });
});
