import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli, useCliStore } from '../support/cli-store.js';
import { CLI } from '../support/spawn-server.js';

/**
 * The admin CLI's refusals: its options read, the problem printed on stderr, the exit code, and a
 * store missing or unreachable. The operations behind them refuse the same on either store (the
 * API files run them on both), and the store they open is SQLite's, so this file runs once
 * (`storeBlind` in vitest.config.ts); admin-cli.test.ts runs the CLI on both stores.
 */
const { cli } = useCliStore({ SIGNALGATE_PUBLIC_URL: 'https://sg.example.test' });

describe('the admin CLI, refusing', () => {
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

  it('a data directory under /proc fails at once naming SIGNALGATE_DATA_DIR (a recursive mkdir there never returns)', async () => {
    // Not timed: a command that hung would be killed by runCli's guard, and its code would not be 1.
    const failed = await runCli(
      { SIGNALGATE_DATA_DIR: '/proc/signalgate/data', SIGNALGATE_DATABASE_URL: '' },
      'accounts',
      'show',
      'acc_any',
      '--create',
    );
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain(
      'signalgate: cannot open the SQLite store in SIGNALGATE_DATA_DIR=/proc/signalgate/data',
    );
    expect(failed.stderr).not.toMatch(/^\s+at /m);
  });

  it('run where no store is, it starts no new empty one (exit 1, saying how), unless given --create', () => {
    const elsewhere = mkdtempSync(path.join(tmpdir(), 'signalgate-elsewhere-'));
    try {
      const base = { ...process.env };
      for (const name of ['SIGNALGATE_DATA_DIR', 'SIGNALGATE_DATABASE_URL']) delete base[name];
      const run = (...args: string[]) =>
        spawnSync(process.execPath, [CLI, ...args], { cwd: elsewhere, env: base, encoding: 'utf8', timeout: 20_000 });
      const refused = run('accounts', 'show', 'acc_any');
      expect(refused.status).toBe(1);
      expect(refused.stderr).toBe(
        `signalgate: no store in SIGNALGATE_DATA_DIR=${path.join(elsewhere, 'data')} (it has no signalgate.db): run this where the server runs, ` +
          `or set SIGNALGATE_DATA_DIR to the server's data directory (SIGNALGATE_DATABASE_URL for a server on PostgreSQL); ` +
          `add --create to start a new, empty store there\n`,
      );
      expect(existsSync(path.join(elsewhere, 'data'))).toBe(false);
      const created = run('accounts', 'create', '--name', 'Fresh desk', '--quota', '5', '--create');
      expect(created.status).toBe(0);
      expect(created.stderr).toBe(`signalgate: store: SQLite ${path.join(elsewhere, 'data', 'signalgate.db')}\n`);
      expect(run('accounts', 'list').stdout).toContain('Fresh desk');
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
  });
});

describe('the admin CLI, refusing what the API refuses', () => {
  it('signals list: a source or cursor naming nothing is a problem, exit 1', async () => {
    const noSource = await cli('signals', 'list', '--source', 'src_nope');
    expect(noSource.code).toBe(1);
    expect(noSource.stdout).toBe('');
    expect(JSON.parse(noSource.stderr)).toMatchObject({ code: 'NOT_FOUND', status: 404, param: 'sourceId' });
    const noCursor = await cli('signals', 'list', '--before', 'sig_nope');
    expect(noCursor.code).toBe(1);
    const problem = JSON.parse(noCursor.stderr);
    expect(problem).toMatchObject({ code: 'NOT_FOUND', status: 404, param: 'before' });
    expect(problem.detail).toContain('next');
    const empty = await cli('signals', 'list', '--source', '');
    expect(empty.code).toBe(1);
    expect(JSON.parse(empty.stderr)).toMatchObject({ code: 'INVALID_REQUEST', param: 'sourceId' });
  });

  it('sources update: --hmac-secret and --clear-hmac-secret together are refused and change nothing', async () => {
    const account = JSON.parse((await cli('accounts', 'create', '--name', 'Conflict desk', '--quota', '3')).stdout);
    const source = JSON.parse(
      (await cli('sources', 'create', '--account', account.id, '--name', 'tv', '--hmac-secret', 'first-secret')).stdout,
    );
    expect(source.hmac).toBe(true);
    const both = await cli(
      'sources',
      'update',
      source.id,
      '--hmac-secret',
      'x',
      '--clear-hmac-secret',
      '--name',
      'renamed',
    );
    expect(both.code).not.toBe(0);
    expect(both.stdout).toBe('');
    expect(both.stderr).toMatch(
      /--clear-hmac-secret.*cannot be used with.*--hmac-secret|--hmac-secret.*cannot be used with.*--clear-hmac-secret/,
    );
    const shown = JSON.parse((await cli('sources', 'show', source.id)).stdout);
    const { authKey: _key, inboundUrl: _url, ...later } = source;
    expect(shown).toEqual(later);
  });

  it('sources create and update --allowed-ips: set, refused naming the bad entry, cleared with ""', async () => {
    const account = JSON.parse((await cli('accounts', 'create', '--name', 'Allowlist desk', '--quota', '3')).stdout);
    const source = JSON.parse(
      (
        await cli(
          'sources',
          'create',
          '--account',
          account.id,
          '--name',
          'tv',
          '--allowed-ips',
          'tradingview, 203.0.113.0/24',
        )
      ).stdout,
    );
    expect(source.allowedIps).toEqual(['tradingview', '203.0.113.0/24']);
    const bad = await cli('sources', 'update', source.id, '--allowed-ips', '2001:db8::/129,198.51.100.1');
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stderr)).toMatchObject({
      code: 'INVALID_FIELD',
      param: 'allowedIps',
      detail: expect.stringContaining("'2001:db8::/129'"),
    });
    expect(JSON.parse((await cli('sources', 'show', source.id)).stdout).allowedIps).toEqual([
      'tradingview',
      '203.0.113.0/24',
    ]);
    expect(
      JSON.parse((await cli('sources', 'update', source.id, '--allowed-ips', '198.51.100.1')).stdout).allowedIps,
    ).toEqual(['198.51.100.1']);
    expect(JSON.parse((await cli('sources', 'update', source.id, '--allowed-ips', '')).stdout).allowedIps).toEqual([]);
  });

  it('sources update with nothing to change is refused', async () => {
    const account = JSON.parse((await cli('accounts', 'create', '--name', 'Idle desk', '--quota', '3')).stdout);
    const source = JSON.parse((await cli('sources', 'create', '--account', account.id, '--name', 'tv')).stdout);
    const nothing = await cli('sources', 'update', source.id);
    expect(nothing.code).toBe(1);
    expect(nothing.stdout).toBe('');
    expect(JSON.parse(nothing.stderr)).toMatchObject({ code: 'INVALID_REQUEST', status: 400 });
  });

  it('accounts show and update print the account; an empty or bad update is refused', async () => {
    const account = JSON.parse((await cli('accounts', 'create', '--name', 'Quota desk', '--quota', '3')).stdout);
    const shown = await cli('accounts', 'show', account.id);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toEqual(account);
    const updated = JSON.parse(
      (await cli('accounts', 'update', account.id, '--quota', '7', '--name', 'Bigger desk')).stdout,
    );
    expect(updated).toEqual({ ...account, name: 'Bigger desk', monthlySignalQuota: 7 });
    expect(JSON.parse((await cli('accounts', 'show', account.id)).stdout)).toEqual(updated);
    const nothing = await cli('accounts', 'update', account.id);
    expect(nothing.code).toBe(1);
    expect(JSON.parse(nothing.stderr)).toMatchObject({ code: 'INVALID_REQUEST' });
    const tooBig = await cli('accounts', 'update', account.id, '--quota', '1000000001');
    expect(tooBig.code).toBe(1);
    expect(JSON.parse(tooBig.stderr)).toMatchObject({ code: 'INVALID_FIELD', param: 'monthlySignalQuota' });
    const missing = await cli('accounts', 'show', 'acc_missing');
    expect(missing.code).toBe(1);
    expect(JSON.parse(missing.stderr)).toMatchObject({ code: 'NOT_FOUND' });
    expect(JSON.parse((await cli('accounts', 'show', account.id)).stdout)).toEqual(updated);
  });
});
