import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freshPostgresSchema } from '../support/postgres.js';
import { CLI, spawnServer, type ServerProcess } from '../support/spawn-server.js';

const run = promisify(execFile);
let env: Record<string, string>;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'signalgate-cli-'));
  cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
  env = { SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_ADMIN_TOKEN: 'cli-admin-token-0123456789', SIGNALGATE_PUBLIC_URL: 'https://sg.example.test' };
  if (process.env.SIGNALGATE_TEST_STORE === 'postgres') {
    const pg = await freshPostgresSchema();
    cleanups.push(() => pg.drop());
    env.SIGNALGATE_DATABASE_URL = pg.urlWithSchema;
  }
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

describe('the admin CLI', () => {
  it('creates what a running server then serves, on the same data', async () => {
    const account = JSON.parse((await cli('accounts', 'create', '--name', 'CLI desk', '--quota', '3')).stdout);
    expect(account).toMatchObject({ name: 'CLI desk', monthlySignalQuota: 3 });
    const agent = JSON.parse((await cli('agents', 'create', '--account', account.id, '--name', 'box')).stdout);
    expect(agent.token).toEqual(expect.any(String));
    const source = JSON.parse(
      (await cli('sources', 'create', '--account', account.id, '--name', 'tv', '--agents', agent.id, '--max-age', '60')).stdout,
    );
    expect(source).toMatchObject({ accountId: account.id, agentIds: [agent.id], maxSignalAgeSeconds: 60, hmac: false, active: true });
    expect(source.inboundUrl).toBe(`https://sg.example.test/api/inbound/${source.authKey}`);

    let server: ServerProcess | null = await spawnServer(env);
    try {
      const res = await fetch(`${server.url}/api/inbound/${source.authKey}`, { method: 'POST', body: 'EURUSD,buy' });
      expect(res.status).toBe(202);
      const signalId = ((await res.json()) as { id: string }).id;
      // The CLI reads and writes the same store while the server runs.
      const usage = JSON.parse((await cli('accounts', 'usage', account.id)).stdout);
      expect(usage).toMatchObject({ used: 1, limit: 3 });
      const shown = JSON.parse((await cli('signals', 'show', signalId)).stdout);
      expect(shown.deliveries).toEqual([expect.objectContaining({ agentId: agent.id, status: 'queued' })]);
      const inactive = JSON.parse((await cli('sources', 'update', source.id, '--active', 'false', '--hmac-secret', 's3cret-s3cret')).stdout);
      expect(inactive).toMatchObject({ active: false, hmac: true });
      const refused = await fetch(`${server.url}/api/inbound/${source.authKey}`, { method: 'POST', body: 'EURUSD,buy' });
      expect(refused.status).toBe(401);
      const rotated = JSON.parse((await cli('sources', 'rotate-key', source.id)).stdout);
      expect(rotated.authKey).not.toBe(source.authKey);
      const cleared = JSON.parse((await cli('sources', 'update', source.id, '--clear-hmac-secret', '--active', 'true')).stdout);
      expect(cleared).toMatchObject({ hmac: false, active: true });
      const list = JSON.parse((await cli('signals', 'list', '--source', source.id, '--status', 'rejected')).stdout);
      expect(list.signals.map((s: { code: string }) => s.code)).toEqual(['SOURCE_INACTIVE']);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
      server = null;
    }
  });

  it('refuses bad input with a problem on stderr and exit code 1', async () => {
    const missing = await cli('sources', 'show', 'src_missing');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: 'NOT_FOUND', status: 404 });
    const bad = await cli('sources', 'create', '--account', 'acc_missing', '--name', 'x');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({ code: 'INVALID_FIELD', param: 'accountId' });
    const notNumber = await cli('accounts', 'create', '--name', 'x', '--quota', 'lots');
    expect(notNumber.code).not.toBe(0);
    expect(notNumber.stderr).toMatch(/whole number/);
  });
});
