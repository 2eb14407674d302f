import { existsSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { adminRequest } from '../support/admin-client.js';
import { runCli, useCliStore } from '../support/cli-store.js';
import { spawnServer } from '../support/spawn-server.js';
import { TEST_ADMIN_TOKEN } from '../support/test-tokens.js';

const store = useCliStore();

/** Starts `signalgate serve`, runs `use` on it, and stops it. */
async function serving<T>(
  env: Record<string, string>,
  use: (url: string, stderr: string, stdout: string) => Promise<T>,
): Promise<T> {
  const server = await spawnServer(env);
  try {
    return await use(server.url, server.stderr(), server.stdout());
  } finally {
    server.child.kill('SIGTERM');
    await server.exited;
  }
}

const status = async (url: string, token: string) =>
  (await adminRequest(url, token, 'GET', '/api/admin/accounts')).status;

describe('the generated admin token', () => {
  it('is written to a 0600 file in the data directory, never printed; reset makes a new one; SIGNALGATE_ADMIN_TOKEN drops it for good', async () => {
    const env = store.env;
    const unset = { ...env, SIGNALGATE_ADMIN_TOKEN: '' };
    const file = path.join(env.SIGNALGATE_DATA_DIR!, 'admin-token');

    // First start: generated, written to the file, and only the file's path is shown.
    const first = await serving(unset, async (url, stderr, stdout) => {
      const token = readFileSync(file, 'utf8').trim();
      expect(token).toMatch(/^sgadm_/);
      expect(statSync(file).mode & 0o777).toBe(0o600);
      expect(stderr).toContain(`wrote it to ${file}`);
      expect(stderr).toContain(`cat ${file}`);
      expect(stdout).toContain(`cat ${file}`);
      expect(stderr + stdout).not.toContain(token);
      expect(await status(url, token)).toBe(200);
      return token;
    });

    // Reset: a new token in the same file; the old one is refused from the next start on.
    const reset = await runCli(unset, 'admin-token', 'reset');
    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain(`wrote it to ${file}`);
    expect(reset.stdout).toContain('restart the server');
    const second = readFileSync(file, 'utf8').trim();
    expect(second).toMatch(/^sgadm_/);
    expect(second).not.toBe(first);
    expect(reset.stdout + reset.stderr).not.toContain(second);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    await serving(unset, async (url, stderr) => {
      expect(stderr).not.toContain('generated the admin token');
      expect(await status(url, first)).toBe(401);
      expect(await status(url, second)).toBe(200);
    });

    // SIGNALGATE_ADMIN_TOKEN set: the generated token is refused, its digest dropped and its file removed.
    await serving(env, async (url) => {
      expect(await status(url, second)).toBe(401);
      expect(await status(url, TEST_ADMIN_TOKEN)).toBe(200);
      expect(existsSync(file)).toBe(false);
    });
    const refused = await runCli(env, 'admin-token', 'reset');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('SIGNALGATE_ADMIN_TOKEN is set');

    // Unset again: the old generated token does not come back; a new one is made.
    await serving(unset, async (url, stderr) => {
      expect(stderr).toContain('generated the admin token');
      const third = readFileSync(file, 'utf8').trim();
      expect([first, second]).not.toContain(third);
      expect(await status(url, second)).toBe(401);
      expect(await status(url, first)).toBe(401);
      expect(await status(url, third)).toBe(200);
    });
  });
});
