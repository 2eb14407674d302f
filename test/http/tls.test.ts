import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { fingerprintOf, httpsRequest, makeCertificate, type TestCertificate } from '../support/https-client.js';
import { CLI, spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { spawn } from 'node:child_process';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const onSqlite = process.env.SIGNALGATE_TEST_STORE !== 'postgres';
const ADMIN = TEST_ADMIN_TOKEN;

describe.runIf(onSqlite)('HTTPS (SIGNALGATE_TLS_CERT, SIGNALGATE_TLS_KEY)', () => {
  // Made when the suite runs: the describe's body runs on the PostgreSQL pass too, where the
  // suite is skipped and its afterAll never removes anything.
  let dir: string;
  let first: TestCertificate;
  let second: TestCertificate;
  let served: { certFile: string; keyFile: string };
  let server: ServerProcess;
  let authKey: string;
  let agentToken: string;

  const request = (
    urlPath: string,
    opts: {
      method?: string;
      body?: unknown;
      headers?: Record<string, string>;
      agent?: https.Agent;
      ca?: string[];
    } = {},
  ) =>
    httpsRequest(`${server.url}${urlPath}`, {
      method: opts.method,
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json', ...opts.headers },
      body: opts.body === undefined ? undefined : typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body),
      ca: opts.ca ?? [first.pem, second.pem],
      agent: opts.agent,
    });

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-tls-'));
    served = { certFile: path.join(dir, 'served.crt'), keyFile: path.join(dir, 'served.key') };
    first = makeCertificate(dir, 'first');
    second = makeCertificate(dir, 'second');
    copyFileSync(first.certFile, served.certFile);
    copyFileSync(first.keyFile, served.keyFile);
    server = await spawnServer({
      SIGNALGATE_DATA_DIR: path.join(dir, 'data'),
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      SIGNALGATE_TLS_CERT: served.certFile,
      SIGNALGATE_TLS_KEY: served.keyFile,
    });
    const account = await request('/api/admin/accounts', {
      method: 'POST',
      body: { name: 'Trader', monthlySignalQuota: 100 },
    });
    const agent = await request(`/api/admin/accounts/${account.body.id}/agents`, {
      method: 'POST',
      body: { name: 'mt5' },
    });
    agentToken = agent.body.token;
    const source = await request('/api/admin/sources', {
      method: 'POST',
      body: { accountId: account.body.id, name: 'TradingView' },
    });
    authKey = source.body.authKey;
  });
  afterAll(async () => {
    server?.child.kill('SIGTERM');
    await server?.exited;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('says it listens once, at its https:// address, with the pid to signal', () => {
    const lines = server
      .stdout()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { msg: string; url?: string; pid?: number });
    expect(lines.filter((line) => /listening/i.test(line.msg))).toEqual([
      expect.objectContaining({ msg: 'listening', url: server.url, pid: server.child.pid }),
    ]);
  });

  it('serves HTTPS on PORT: a signal POSTed over TLS gets 202, and plain HTTP is not answered as HTTP', async () => {
    expect(server.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    const answer = await request(`/api/inbound/${authKey}`, {
      method: 'POST',
      body: 'EURUSD,buy',
      headers: { 'content-type': 'text/plain' },
    });
    expect(answer.status).toBe(202);
    expect(answer.body.id).toMatch(/^sig_/);
    expect(answer.fingerprint).toBe(fingerprintOf(first.pem));
    // Served over HTTPS here: browsers are told to come back only over HTTPS, on every route.
    expect(answer.headers['strict-transport-security']).toBe('max-age=31536000');
    for (const urlPath of ['/healthz', '/api/admin/accounts', '/', '/no-such-route']) {
      expect((await request(urlPath)).headers['strict-transport-security'], urlPath).toBe('max-age=31536000');
    }
    await expect(fetch(server.url.replace('https:', 'http:') + '/healthz')).rejects.toThrow();
  });

  it('pushes to agents over wss://', async () => {
    const ws = new WebSocket(`${server.url.replace('https:', 'wss:')}/api/agent/ws`, {
      headers: { authorization: `Bearer ${agentToken}` },
      ca: [first.pem, second.pem],
    });
    const messages: any[] = [];
    ws.on('message', (data) => messages.push(JSON.parse(data.toString())));
    await new Promise((resolve, reject) => {
      ws.once('open', resolve);
      ws.once('error', reject);
    });
    const posted = await request(`/api/inbound/${authKey}`, {
      method: 'POST',
      body: 'GBPUSD,sell',
      headers: { 'content-type': 'text/plain' },
    });
    expect(posted.status).toBe(202);
    await waitUntil(
      () =>
        messages.some((m) => m.type === 'signals' && m.signals.some((s: { id: string }) => s.id === posted.body.id)),
      'the pushed signal',
    );
    expect(messages[0]).toMatchObject({ type: 'hello', agent: { name: 'mt5' } });
    ws.close();
    await new Promise((resolve) => ws.once('close', resolve));
  });

  it('SIGHUP serves replaced files to new connections while an open keep-alive connection keeps working', async () => {
    const keepAlive = new https.Agent({ keepAlive: true, maxSockets: 1 });
    const before = await request('/healthz', { agent: keepAlive });
    expect(before.fingerprint).toBe(fingerprintOf(first.pem));

    copyFileSync(second.certFile, served.certFile);
    copyFileSync(second.keyFile, served.keyFile);
    const logged = server.stdout().length;
    server.child.kill('SIGHUP');
    await waitUntil(
      () => server.stdout().slice(logged).includes('"msg":"certificate reloaded"'),
      'the reload log line',
    );
    expect(server.stdout().slice(logged)).toContain('CN=second');

    const fresh = await request('/healthz');
    expect(fresh.fingerprint).toBe(fingerprintOf(second.pem));
    // The open connection was not dropped: it carries the next signal, on the certificate it began with.
    const onOpen = await request(`/api/inbound/${authKey}`, {
      method: 'POST',
      body: 'USDJPY,buy',
      headers: { 'content-type': 'text/plain' },
      agent: keepAlive,
    });
    expect(onOpen.status).toBe(202);
    expect(onOpen.reusedConnection).toBe(true);
    expect(onOpen.fingerprint).toBe(fingerprintOf(first.pem));
    keepAlive.destroy();
    expect(server.child.exitCode).toBeNull();
  });

  it('a bad file at SIGHUP keeps the certificate served and logs an error naming the setting', async () => {
    writeFileSync(served.certFile, 'not a certificate\n');
    const logged = server.stdout().length;
    server.child.kill('SIGHUP');
    await waitUntil(() => server.stdout().slice(logged).includes('certificate not reloaded'), 'the error line');
    const line = JSON.parse(
      server
        .stdout()
        .slice(logged)
        .split('\n')
        .find((l) => l.includes('certificate not reloaded'))!,
    );
    expect(line.level).toBe(50);
    expect(line.msg).toContain(`SIGNALGATE_TLS_CERT=${served.certFile} is not a PEM certificate`);
    const after = await request('/healthz');
    expect(after.status).toBe(200);
    expect(after.fingerprint).toBe(fingerprintOf(second.pem));
  });
});

describe.runIf(onSqlite)(
  'HTTPS settings that cannot be served fail the start with one sentence naming the setting',
  () => {
    let dir: string; // made when the suite runs, as above
    let cert: TestCertificate;
    let other: TestCertificate;
    beforeAll(() => {
      dir = mkdtempSync(path.join(tmpdir(), 'signalgate-tls-bad-'));
      cert = makeCertificate(dir, 'good');
      other = makeCertificate(dir, 'other');
      writeFileSync(path.join(dir, 'garbage.pem'), 'garbage\n');
    });
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true });
    });

    const serve = (env: Record<string, string>) =>
      new Promise<{ code: number | null; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [CLI, 'serve'], {
          env: {
            ...process.env,
            HOST: '127.0.0.1',
            PORT: '0',
            SIGNALGATE_DATA_DIR: path.join(dir, 'data'),
            SIGNALGATE_ADMIN_TOKEN: ADMIN,
            ...env,
          },
          stdio: ['ignore', 'ignore', 'pipe'],
        });
        let stderr = '';
        child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
        const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
        child.on('close', (code) => {
          clearTimeout(timer);
          resolve({ code, stderr });
        });
      });

    it.each([
      [
        'a missing certificate file',
        () => ({ SIGNALGATE_TLS_CERT: path.join(dir, 'none.crt'), SIGNALGATE_TLS_KEY: cert.keyFile }),
        'cannot read SIGNALGATE_TLS_CERT=',
      ],
      [
        'a certificate file that is not PEM',
        () => ({ SIGNALGATE_TLS_CERT: path.join(dir, 'garbage.pem'), SIGNALGATE_TLS_KEY: cert.keyFile }),
        'is not a PEM certificate',
      ],
      [
        'a key file that is not PEM',
        () => ({ SIGNALGATE_TLS_CERT: cert.certFile, SIGNALGATE_TLS_KEY: path.join(dir, 'garbage.pem') }),
        'SIGNALGATE_TLS_KEY=',
      ],
      [
        'a key of another certificate',
        () => ({ SIGNALGATE_TLS_CERT: cert.certFile, SIGNALGATE_TLS_KEY: other.keyFile }),
        'is not the private key of the certificate in SIGNALGATE_TLS_CERT',
      ],
      [
        'a certificate without its key',
        () => ({ SIGNALGATE_TLS_CERT: cert.certFile }),
        'SIGNALGATE_TLS_CERT is set but SIGNALGATE_TLS_KEY is not',
      ],
    ])('%s', async (_what, env, sentence) => {
      const run = await serve(env());
      expect(run.code).toBe(1);
      expect(run.stderr).toMatch(/^signalgate: cannot start: .+$/m);
      expect(run.stderr).toContain(sentence);
      expect(run.stderr).not.toMatch(/^\s+at /m);
    });
  },
);
