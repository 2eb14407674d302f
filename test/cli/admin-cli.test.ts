import path from 'node:path';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { CLI_ADMIN_TOKEN, freshCliStore, runCli, useCliStore } from '../support/cli-store.js';
import { freshPostgresSchema, TEST_DATABASE_URL } from '../support/postgres.js';
import { spawnServer, type ServerProcess } from '../support/spawn-server.js';

/**
 * The admin CLI on the store a server runs on, on each store: what it creates the server serves,
 * which store it says it opened. Its refusals, on one store, are in admin-cli-refusals.test.ts.
 */
const { env, cleanups, cli } = useCliStore({ SIGNALGATE_PUBLIC_URL: 'https://sg.example.test' });

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
