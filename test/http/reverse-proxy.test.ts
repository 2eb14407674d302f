import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureDebianPackage } from '../support/debian-package.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { freePort } from '../support/free-port.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const onSqlite = process.env.SIGNALGATE_TEST_STORE !== 'postgres';
const ADMIN = TEST_ADMIN_TOKEN;

/**
 * A request to caddy at https://localhost:PORT that trusts caddy's own root only, sent from
 * 127.0.0.2 (still this machine) so the client's address differs from caddy's.
 */
function throughCaddy(
  port: number,
  root: string,
  method: string,
  urlPath: string,
  body?: string,
  headers: Record<string, string> = {},
) {
  return new Promise<{ status: number; body: any }>((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        servername: 'localhost',
        port,
        path: urlPath,
        method,
        ca: root,
        localAddress: '127.0.0.2',
        headers: { host: `localhost:${port}`, authorization: `Bearer ${ADMIN}`, ...headers },
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text === '' ? null : JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** The recipe of docs/operations.md ("HTTPS") on one machine, with caddy's internal CA in place of a public one. */
describe.runIf(onSqlite)('behind caddy (a reverse proxy that obtains its certificates itself)', () => {
  // Made when the suite runs: the describe's body runs on the PostgreSQL pass too, where the
  // suite is skipped and its afterAll never removes anything.
  let dir: string;
  let server: ServerProcess;
  let caddy: ChildProcess;
  let caddyLog = '';
  let caddyPort: number;
  let root: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-caddy-'));
    ensureDebianPackage('caddy', 'caddy');
    server = await spawnServer({
      SIGNALGATE_DATA_DIR: path.join(dir, 'signalgate'),
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      SIGNALGATE_TRUST_PROXY: '127.0.0.1',
    });
    caddyPort = await freePort();
    const upstream = new URL(server.url).host;
    // The Caddyfile of operations.md for one machine, on this test's ports: its admin off,
    // skip_install_trust, disable_redirects and bind also keep a test's caddy off every shared
    // port, the system trust store and everything outside its own directory.
    const doc = readFileSync('docs/operations.md', 'utf8');
    const start =
      doc.indexOf('```caddyfile\n', doc.indexOf('To try Caddy on one machine first')) + '```caddyfile\n'.length;
    const documented = doc.slice(start, doc.indexOf('```\n', start));
    expect(documented).toContain('https://localhost:8443 {');
    expect(documented).toContain('reverse_proxy 127.0.0.1:8080');
    writeFileSync(
      path.join(dir, 'Caddyfile'),
      documented
        .replace('https://localhost:8443', `https://localhost:${caddyPort}`)
        .replace('reverse_proxy 127.0.0.1:8080', `reverse_proxy ${upstream}`),
    );
    for (const sub of ['home', 'data', 'config']) mkdirSync(path.join(dir, sub));
    caddy = spawn('caddy', ['run', '--config', path.join(dir, 'Caddyfile'), '--adapter', 'caddyfile'], {
      env: {
        PATH: process.env.PATH,
        HOME: path.join(dir, 'home'),
        XDG_DATA_HOME: path.join(dir, 'data'),
        XDG_CONFIG_HOME: path.join(dir, 'config'),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    caddy.stdout!.on('data', (d: Buffer) => (caddyLog += d.toString()));
    caddy.stderr!.on('data', (d: Buffer) => (caddyLog += d.toString()));
    const rootFile = path.join(dir, 'data', 'caddy', 'pki', 'authorities', 'local', 'root.crt');
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (caddy.exitCode !== null) throw new Error(`caddy exited ${caddy.exitCode}:\n${caddyLog}`);
      if (existsSync(rootFile)) {
        root = readFileSync(rootFile, 'utf8');
        const ready = await throughCaddy(caddyPort, root, 'GET', '/healthz').catch(() => null);
        if (ready?.status === 200 && ready.body?.status === 'ok') break;
      }
      if (Date.now() > deadline)
        throw new Error(`caddy did not serve https://localhost:${caddyPort} within 30 s:\n${caddyLog}`);
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  afterAll(async () => {
    caddy?.kill('SIGTERM');
    server?.child.kill('SIGTERM');
    await server?.exited;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a signal sent over HTTPS through caddy gets 202 and is logged with the client’s address, not caddy’s', async () => {
    const account = await throughCaddy(
      caddyPort,
      root,
      'POST',
      '/api/admin/accounts',
      JSON.stringify({ name: 'Trader', monthlySignalQuota: 10 }),
      {
        'content-type': 'application/json',
      },
    );
    expect(account.status).toBe(201);
    const source = await throughCaddy(
      caddyPort,
      root,
      'POST',
      '/api/admin/sources',
      JSON.stringify({ accountId: account.body.id, name: 'TradingView' }),
      {
        'content-type': 'application/json',
      },
    );
    expect(source.status).toBe(201);
    // What the client writes into X-Forwarded-For itself is not what gets logged.
    const signal = await throughCaddy(caddyPort, root, 'POST', `/api/inbound/${source.body.authKey}`, 'EURUSD,buy', {
      'content-type': 'text/plain',
      'x-forwarded-for': '198.51.100.66',
    });
    expect(signal.status).toBe(202);

    // The server's log goes out in blocks, at least every FLUSH_EVERY_MS: waited for, generously.
    const deadline = Date.now() + 20_000;
    let line: Record<string, unknown> | undefined;
    while (line === undefined && Date.now() < deadline) {
      line = server
        .stdout()
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.msg === 'request' && l.signalId === signal.body.id);
      if (line === undefined) await new Promise((r) => setTimeout(r, 50));
    }
    expect(line).toMatchObject({ method: 'POST', statusCode: 202, clientAddress: '127.0.0.2' });
  });
});
