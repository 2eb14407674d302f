import http from 'node:http';
import net from 'node:net';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { httpsRequest, makeCertificate, type TestCertificate } from '../support/https-client.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';
import { AgentClient } from '../../src/agent/agent-client.js';
import { AgentSetupError } from '../../src/agent/agent-errors.js';
import { AgentProcess } from './support/agent-process.js';

const onSqlite = process.env.SIGNALGATE_TEST_STORE !== 'postgres';
const ADMIN = 'setup-errors-admin-token-0123456789';

/**
 * A setup the agent cannot work with is told as what to fix, and the agent stops (exit 2):
 * retrying would never help. A server that is down or failing is an outage: it retries.
 */
describe.runIf(onSqlite)('the agent facing a setup error', () => {
  let dir: string;
  let certificate: TestCertificate;
  let server: ServerProcess;
  let token: string;
  const plain: http.Server[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-agent-setup-'));
    certificate = makeCertificate(dir, 'self-signed');
    server = await spawnServer({
      SIGNALGATE_DATA_DIR: path.join(dir, 'data'),
      SIGNALGATE_ADMIN_TOKEN: ADMIN,
      SIGNALGATE_TLS_CERT: certificate.certFile,
      SIGNALGATE_TLS_KEY: certificate.keyFile,
    });
    const admin = (urlPath: string, body: unknown) =>
      httpsRequest(`${server.url}${urlPath}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        ca: [certificate.pem],
      });
    const account = await admin('/api/admin/accounts', { name: 'Desk', monthlySignalQuota: 10 });
    const agent = await admin(`/api/admin/accounts/${account.body.id}/agents`, { name: 'paper' });
    token = agent.body.token;
  });
  afterAll(async () => {
    for (const s of plain) s.close();
    server?.child.kill('SIGTERM');
    await server?.exited;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const stateDir = () => mkdtempSync(path.join(dir, 'agent-'));

  /** A plain HTTP server that answers every request with `status`, as a web server that is not signalgate would. */
  async function answering(status: number): Promise<string> {
    const s = http.createServer((_req, res) =>
      res.writeHead(status, { 'content-type': 'text/html' }).end(`<h1>${status}</h1>`),
    );
    plain.push(s);
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(s.address() as { port: number }).port}`;
  }

  it('a certificate it does not trust: exit 2, naming NODE_EXTRA_CA_CERTS; with that set it connects', async () => {
    const state = stateDir();
    const refused = AgentProcess.start(server.url, token, state);
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr).toContain(`the agent does not trust the certificate of ${server.url}`);
    expect(refused.stderr).toContain('NODE_EXTRA_CA_CERTS=/path/to/ca.pem');
    expect(refused.stdout).not.toContain('unreachable');
    expect(readdirSync(state)).toEqual([]);

    const trusting = AgentProcess.startVenue(server.url, token, state, ['--paper'], {
      NODE_EXTRA_CA_CERTS: certificate.certFile,
    });
    try {
      await trusting.connected('websocket');
    } finally {
      trusting.child.kill('SIGTERM');
      expect((await trusting.exited).code).toBe(0);
    }
  });

  it('the client library: its signals end with AgentSetupError on a certificate it does not trust', async () => {
    const client = new AgentClient({ server: server.url, token, backoff: { initialMs: 50, maxMs: 200 } });
    try {
      const next = client.signals().next();
      await expect(next).rejects.toBeInstanceOf(AgentSetupError);
      await expect(next).rejects.toThrow('NODE_EXTRA_CA_CERTS');
    } finally {
      await client.close();
    }
  });

  it('http:// for a server that speaks HTTPS: exit 2, naming the https:// URL to use, instead of retrying as if it were down', async () => {
    const wrong = server.url.replace(/^https:/, 'http:');
    const refused = AgentProcess.start(wrong, token, stateDir());
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr).toContain(
      `the server at ${wrong} speaks HTTPS, not plain HTTP; use --server ${server.url.replace(/\/$/, '')}`,
    );
    expect(refused.stdout).not.toContain('unreachable');
  });

  it('https:// for a server that answers plain HTTP: exit 2, naming the http:// URL', async () => {
    const url = await answering(404);
    const wrong = url.replace(/^http:/, 'https:');
    const refused = AgentProcess.start(wrong, token, stateDir());
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr).toContain(
      `the server at ${wrong} answers plain HTTP, not HTTPS; if it serves no HTTPS, use --server ${url}`,
    );
  });

  it('http:// for a port where nothing answers TLS either (a server going down): still an outage, retried', async () => {
    const reset = net.createServer((socket) => socket.resetAndDestroy());
    await new Promise<void>((resolve) => reset.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(reset.address() as { port: number }).port}`;
    const waiting = AgentProcess.start(url, token, stateDir());
    try {
      await waiting.waitForLog((l) => String(l.msg).includes('unreachable'), 'the unreachable warning');
      expect(waiting.child.exitCode).toBeNull();
    } finally {
      waiting.child.kill('SIGTERM');
      await waiting.exited;
      reset.close();
    }
  });

  it('a wrong token: exit 2, saying the server refused it', async () => {
    const refused = AgentProcess.startVenue(server.url, 'sga_not-this-one', stateDir(), ['--paper'], {
      NODE_EXTRA_CA_CERTS: certificate.certFile,
    });
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr).toContain(
      'the server refused the agent token (401); check the token given in SIGNALGATE_AGENT_TOKEN, --token-file or --token',
    );
  });

  it('a server that is not signalgate (404 to everything): exit 2, saying to check --server', async () => {
    const url = await answering(404);
    const refused = AgentProcess.start(url, token, stateDir());
    expect((await refused.exited).code).toBe(2);
    expect(refused.stderr).toContain(
      `${url}/api/agent answered 404, so ${url}/ is not a signalgate server; check --server`,
    );
  });

  it('a server that fails (503) is an outage: the agent retries and keeps running', async () => {
    const url = await answering(503);
    const waiting = AgentProcess.start(url, token, stateDir());
    try {
      await waiting.waitForLog(
        (l) => l.msg === 'the server could not check the agent token yet; retrying',
        'the retry warning',
      );
      // Still retrying a while later: nothing told it to stop.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      expect(waiting.child.exitCode).toBeNull();
    } finally {
      waiting.child.kill('SIGTERM');
      await waiting.exited;
    }
  });
});
