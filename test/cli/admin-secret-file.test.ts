import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { sign } from '../support/seed-source.js';
import { STORE_LINE, useCliStore } from '../support/cli-store.js';
import { CLI, spawnServer } from '../support/spawn-server.js';

const { env, cleanups, cli } = useCliStore();
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'signalgate-secret-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
});

function secretFile(name: string, content: string, mode: number): string {
  const file = path.join(dir, name);
  writeFileSync(file, content);
  chmodSync(file, mode);
  return file;
}

describe("a source's HMAC secret on the command line", () => {
  it('is read from --hmac-secret-file or standard input without a warning; --hmac-secret still works, with one', async () => {
    const account = JSON.parse((await cli('accounts', 'create', '--name', 'desk', '--quota', '10')).stdout);
    const fromFile = await cli(
      'sources',
      'create',
      '--account',
      account.id,
      '--name',
      'file',
      '--hmac-secret-file',
      secretFile('s1', 'secret-from-a-file\n', 0o600),
    );
    expect(fromFile).toMatchObject({ code: 0, stderr: '' });
    const fileSource = JSON.parse(fromFile.stdout);
    expect(fileSource.hmac).toBe(true);

    const fromFlag = await cli(
      'sources',
      'create',
      '--account',
      account.id,
      '--name',
      'flag',
      '--hmac-secret',
      'secret-from-a-flag',
    );
    expect(fromFlag.code).toBe(0);
    expect(fromFlag.stderr).toMatch(
      /^signalgate: warning: --hmac-secret puts the source's secret in the process list.*--hmac-secret-file/,
    );
    const flagSource = JSON.parse(fromFlag.stdout);

    // Standard input, as `printf '%s' "$SECRET" | … --hmac-secret-file -` gives it.
    const piped = spawnSync(process.execPath, [CLI, 'sources', 'update', flagSource.id, '--hmac-secret-file', '-'], {
      env: { ...process.env, ...env },
      input: 'secret-from-stdin',
      encoding: 'utf8',
    });
    expect({ status: piped.status, stderr: piped.stderr.replace(STORE_LINE, '') }).toEqual({ status: 0, stderr: '' });

    const loose = await cli(
      'sources',
      'create',
      '--account',
      account.id,
      '--name',
      'loose',
      '--hmac-secret-file',
      secretFile('s2', 'readable-by-all', 0o644),
    );
    expect(loose.code).toBe(0);
    expect(loose.stderr).toContain('can be read by other users of this machine; chmod 600 it');

    const missing = await cli(
      'sources',
      'create',
      '--account',
      account.id,
      '--name',
      'x',
      '--hmac-secret-file',
      path.join(dir, 'nope'),
    );
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('--hmac-secret-file');
    expect(missing.stderr).toContain('no such file');
    const empty = await cli(
      'sources',
      'create',
      '--account',
      account.id,
      '--name',
      'x',
      '--hmac-secret-file',
      secretFile('s3', '\n', 0o600),
    );
    expect(empty.code).toBe(1);
    expect(empty.stderr).toContain('is empty');
    const both = await cli(
      'sources',
      'create',
      '--account',
      account.id,
      '--name',
      'x',
      '--hmac-secret',
      'a',
      '--hmac-secret-file',
      secretFile('s4', 'b', 0o600),
    );
    expect(both.code).not.toBe(0);
    // Nothing was made by the refused commands.
    expect(JSON.parse((await cli('sources', 'list', '--account', account.id)).stdout).sources).toHaveLength(3);

    // The server takes signatures made with exactly the secrets given (the file's line end dropped).
    const server = await spawnServer(env);
    try {
      const send = (authKey: string, secret: string) =>
        fetch(`${server.url}/api/inbound/${authKey}`, {
          method: 'POST',
          headers: { 'x-signature': sign(secret, 'EURUSD,buy') },
          body: 'EURUSD,buy',
        });
      expect((await send(fileSource.authKey, 'secret-from-a-file')).status).toBe(202);
      expect((await send(flagSource.authKey, 'secret-from-stdin')).status).toBe(202);
      expect((await send(flagSource.authKey, 'secret-from-a-flag')).status).toBe(401);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
