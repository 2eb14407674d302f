import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ADMIN_TOKEN, freshCliStore, runCli } from '../support/cli-store.js';
import { freshPostgresSchema, TEST_DATABASE_URL } from '../support/postgres.js';
import { CLI, spawnServer, type ServerProcess } from '../support/spawn-server.js';

let env: Record<string, string>;
const cleanups: Array<() => Promise<void> | void> = [];

beforeAll(async () => {
  env = await freshCliStore(cleanups, { SIGNALGATE_PUBLIC_URL: 'https://sg.example.test' });
});
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string; store: string | null }> {
  return runCli(env, ...args);
}

describe('the admin CLI', () => {
  it('creates what a running server then serves, on the same data', async () => {
    const account = JSON.parse((await cli('accounts', 'create', '--name', 'CLI desk', '--quota', '3')).stdout);
    expect(account).toMatchObject({ name: 'CLI desk', monthlySignalQuota: 3 });
    const agent = JSON.parse((await cli('agents', 'create', '--account', account.id, '--name', 'box')).stdout);
    expect(agent.token).toEqual(expect.any(String));
    const source = JSON.parse(
      (await cli('sources', 'create', '--account', account.id, '--name', 'tv', '--agents', agent.id, '--max-age', '60'))
        .stdout,
    );
    expect(source).toMatchObject({
      accountId: account.id,
      agentIds: [agent.id],
      maxSignalAgeSeconds: 60,
      hmac: false,
      active: true,
    });
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
      // The CLI prints what the API answers.
      const apiShown = await fetch(`${server.url}/api/admin/signals/${signalId}`, {
        headers: { authorization: `Bearer ${env.SIGNALGATE_ADMIN_TOKEN}` },
      });
      expect(shown).toEqual(await apiShown.json());
      expect(shown).toMatchObject({ status: 'accepted', outcome: { queued: 1 } });
      const byOutcome = JSON.parse(
        (await cli('signals', 'list', '--outcome', 'queued', '--symbol', 'eurusd', '--source', source.id)).stdout,
      );
      expect(byOutcome.signals.map((s: { id: string; outcome: unknown }) => [s.id, s.outcome])).toEqual([
        [signalId, { queued: 1 }],
      ]);
      expect(
        JSON.parse((await cli('signals', 'list', '--outcome', 'executed', '--source', source.id)).stdout).signals,
      ).toEqual([]);
      const badOutcome = await cli('signals', 'list', '--outcome', 'done');
      expect(badOutcome.code).toBe(1);
      expect(JSON.parse(badOutcome.stderr)).toMatchObject({ param: 'outcome' });

      // The duplicate guard: on, then the same body again within the window is the first signal again.
      const guarded = JSON.parse((await cli('sources', 'update', source.id, '--duplicate-window', '30')).stdout);
      expect(guarded.duplicateWindowSeconds).toBe(30);
      const tooLong = await cli('sources', 'update', source.id, '--duplicate-window', '3601');
      expect(tooLong.code).toBe(1);
      expect(JSON.parse(tooLong.stderr)).toMatchObject({ status: 422, param: 'duplicateWindowSeconds' });
      const firstGuarded = await fetch(`${server.url}/api/inbound/${source.authKey}`, {
        method: 'POST',
        body: 'EURUSD,sell',
      });
      const again = await fetch(`${server.url}/api/inbound/${source.authKey}`, { method: 'POST', body: 'EURUSD,sell' });
      expect(again.status).toBe(202);
      expect(await again.json()).toEqual(await firstGuarded.json());
      const duplicates = JSON.parse(
        (await cli('signals', 'list', '--source', source.id, '--status', 'duplicate')).stdout,
      );
      expect(duplicates.signals).toHaveLength(1);
      await cli('sources', 'update', source.id, '--duplicate-window', '0');
      const inactive = JSON.parse(
        (await cli('sources', 'update', source.id, '--active', 'false', '--hmac-secret', 's3cret-s3cret')).stdout,
      );
      expect(inactive).toMatchObject({ active: false, hmac: true });
      const refused = await fetch(`${server.url}/api/inbound/${source.authKey}`, {
        method: 'POST',
        body: 'EURUSD,buy',
      });
      expect(refused.status).toBe(401);
      const rotated = JSON.parse((await cli('sources', 'rotate-key', source.id)).stdout);
      expect(rotated.authKey).not.toBe(source.authKey);
      const cleared = JSON.parse(
        (await cli('sources', 'update', source.id, '--clear-hmac-secret', '--active', 'true')).stdout,
      );
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
});

describe('which store the admin CLI opens', () => {
  it('says which store it opened, on stderr, and never shows a database password', async () => {
    const listed = await cli('accounts', 'list');
    expect(listed.code).toBe(0);
    if (env.SIGNALGATE_DATABASE_URL) {
      const shown = new URL(env.SIGNALGATE_DATABASE_URL);
      expect(listed.store).toMatch(/^signalgate: store: PostgreSQL postgres:\/\//);
      expect(listed.store).toContain(`${shown.host}${shown.pathname}`);
      const withPassword = new URL(env.SIGNALGATE_DATABASE_URL);
      withPassword.password = 'hunter2-secret';
      const refused = await runCli({ ...env, SIGNALGATE_DATABASE_URL: withPassword.toString() }, 'accounts', 'list');
      expect(`${refused.store ?? ''}${refused.stderr}`).not.toContain('hunter2-secret');
    } else {
      expect(listed.store).toBe(`signalgate: store: SQLite ${path.join(env.SIGNALGATE_DATA_DIR!, 'signalgate.db')}`);
    }
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

describe.runIf(process.env.SIGNALGATE_TEST_STORE === 'postgres')('the admin CLI on an empty PostgreSQL schema', () => {
  it('starts no new empty store there (exit 1, naming the database without its password, saying how), unless given --create', async () => {
    const empty = await freshPostgresSchema('cli_empty');
    cleanups.push(() => empty.drop());
    const url = new URL(empty.urlWithSchema);
    url.password = 'hunter2-secret';
    const shown = new URL(url);
    shown.password = '****';
    const pointed = { ...env, SIGNALGATE_DATABASE_URL: url.toString() };
    const refused = await runCli(pointed, 'accounts', 'list');
    expect(refused.code).toBe(1);
    expect(refused.store).toBeNull();
    expect(refused.stdout).toBe('');
    expect(refused.stderr).toBe(
      `signalgate: no store in the PostgreSQL database at SIGNALGATE_DATABASE_URL=${shown.toString()} ` +
        `(it has no signalgate tables in that database and schema): set SIGNALGATE_DATABASE_URL to the server's database ` +
        `(with its search_path, if the server uses a schema); add --create to start a new, empty store there\n`,
    );
    expect(refused.stderr).not.toContain('hunter2-secret');
    expect(await tablesIn(empty.schema)).toEqual([]);

    const created = await runCli(
      { ...env, SIGNALGATE_DATABASE_URL: empty.urlWithSchema },
      'accounts',
      'create',
      '--name',
      'Fresh PG desk',
      '--quota',
      '5',
      '--create',
    );
    expect(created.code).toBe(0);
    expect(created.store).toMatch(/^signalgate: store: PostgreSQL postgres:\/\//);
    expect(await tablesIn(empty.schema)).toContain('schema_migrations');
    const listed = await runCli({ ...env, SIGNALGATE_DATABASE_URL: empty.urlWithSchema }, 'accounts', 'list');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain('Fresh PG desk');
  });
});

/** The tables in one PostgreSQL schema, by name. */
async function tablesIn(schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string }>(
      'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1',
      [schema],
    );
    return rows.map((row) => row.name);
  } finally {
    await client.end();
  }
}

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

describe('the admin CLI beside a server that has no SIGNALGATE_PUBLIC_URL', () => {
  let plain: Record<string, string>;
  beforeAll(async () => {
    plain = await freshCliStore(cleanups);
  });

  it('prints the inbound URL the server renders, and a raised quota applies at once', async () => {
    const account = JSON.parse(
      (await runCli(plain, 'accounts', 'create', '--name', 'URL desk', '--quota', '1')).stdout,
    );
    const server = await spawnServer(plain);
    try {
      const admin = { authorization: `Bearer ${CLI_ADMIN_TOKEN}`, 'content-type': 'application/json' };
      const created = await fetch(`${server.url}/api/admin/sources`, {
        method: 'POST',
        headers: admin,
        body: JSON.stringify({ accountId: account.id, name: 'tv' }),
      });
      const apiSource = (await created.json()) as { id: string; authKey: string; inboundUrl: string };
      // The URL the API renders is one a sender can reach: the port the server got.
      expect(apiSource.inboundUrl).toBe(`${server.url}/api/inbound/${apiSource.authKey}`);
      const shown = JSON.parse((await runCli(plain, 'sources', 'show', apiSource.id)).stdout);
      // The key was shown once, at creation: `sources show` has its hint only.
      const { authKey: _key, inboundUrl: _url, ...later } = apiSource;
      expect(shown).toEqual({ ...later, authKeyHint: apiSource.authKey.slice(0, 4) });
      const rotated = JSON.parse((await runCli(plain, 'sources', 'rotate-key', apiSource.id)).stdout);
      expect(rotated.inboundUrl).toBe(`${server.url}/api/inbound/${rotated.authKey}`);
      const cliCreated = JSON.parse(
        (await runCli(plain, 'sources', 'create', '--account', account.id, '--name', 'bot')).stdout,
      );
      expect(cliCreated.inboundUrl).toBe(`${server.url}/api/inbound/${cliCreated.authKey}`);
      // The operator's own SIGNALGATE_PUBLIC_URL still wins for the CLI.
      const own = JSON.parse(
        (
          await runCli(
            { ...plain, SIGNALGATE_PUBLIC_URL: 'https://own.example.test/' },
            'sources',
            'rotate-key',
            apiSource.id,
          )
        ).stdout,
      );
      expect(own.inboundUrl).toBe(`https://own.example.test/api/inbound/${own.authKey}`);
      expect(JSON.parse((await runCli(plain, 'sources', 'show', apiSource.id)).stdout)).toMatchObject({
        authKeyHint: own.authKey.slice(0, 4),
      });

      const send = () => fetch(`${server.url}/api/inbound/${own.authKey}`, { method: 'POST', body: 'EURUSD,buy' });
      expect((await send()).status).toBe(202);
      expect((await send()).status).toBe(429);
      const raised = await runCli(plain, 'accounts', 'update', account.id, '--quota', '2');
      expect(JSON.parse(raised.stdout)).toMatchObject({ id: account.id, monthlySignalQuota: 2 });
      const accepted = await send();
      expect(accepted.status).toBe(202);
      expect(((await accepted.json()) as { quota: unknown }).quota).toMatchObject({ used: 2, limit: 2 });
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });
});
