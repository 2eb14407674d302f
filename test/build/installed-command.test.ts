import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The package as a user installs it: `npm pack`, then `npm install -g` of the tarball into a
 * prefix of its own, and the `signalgate` command that leaves, run from a directory that is not
 * the checkout (so migrations and the dashboard must be found beside the package, not in the
 * working directory). Dependencies come from the npm registry or npm's cache (`--prefer-offline`).
 *
 * better-sqlite3's install script still runs; it is pointed at a prebuilt binary made from the
 * checkout's own build, as the one it downloads from GitHub would be, so the test does not spend
 * minutes compiling SQLite where GitHub is out of reach.
 */
const root = mkdtempSync(path.join(tmpdir(), 'signalgate-installed-'));
const prefix = path.join(root, 'prefix');
const command = path.join(prefix, 'bin', 'signalgate');
const elsewhere = path.join(root, 'elsewhere');

function run(args: string[], env: NodeJS.ProcessEnv = {}) {
  return spawnSync(command, args, {
    cwd: elsewhere,
    env: { ...cleanEnv(), ...env },
    encoding: 'utf8',
    timeout: 30_000,
  });
}

/** The test's environment without its own signalgate settings. */
function cleanEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env))
    if (name.startsWith('SIGNALGATE_') || name === 'HOST' || name === 'PORT') delete env[name];
  return env;
}

beforeAll(() => {
  mkdirSync(elsewhere);
  // Scripts off: `prepare` would rebuild dist/ under the other tests; the build is already there.
  const packed = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', root], { encoding: 'utf8' });
  expect(packed.status, packed.stderr).toBe(0);
  const tarball = readdirSync(root).find((name) => /^signalgate-.*\.tgz$/.test(name));
  expect(tarball).toBeDefined();

  const prebuilds = path.join(root, 'prebuilds');
  mkdirSync(prebuilds);
  const sqlite = path.resolve('node_modules/better-sqlite3');
  const { version } = JSON.parse(readFileSync(path.join(sqlite, 'package.json'), 'utf8')) as { version: string };
  const prebuilt = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const tar = spawnSync('tar', [
    '-czf',
    path.join(prebuilds, prebuilt),
    '-C',
    sqlite,
    'build/Release/better_sqlite3.node',
  ]);
  expect(tar.status, String(tar.stderr)).toBe(0);

  const install = spawnSync(
    'npm',
    [
      'install',
      '--global',
      '--prefix',
      prefix,
      '--prefer-offline',
      '--no-audit',
      '--no-fund',
      path.join(root, tarball!),
    ],
    { cwd: elsewhere, encoding: 'utf8', env: { ...cleanEnv(), npm_config_better_sqlite3_local_prebuilds: prebuilds } },
  );
  expect(install.status, install.stderr).toBe(0);
}, 600_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the installed signalgate command', () => {
  it('is on the prefix’s PATH, without the TypeScript sources or the development dependencies', () => {
    expect(existsSync(command)).toBe(true);
    const installed = path.join(prefix, 'lib', 'node_modules', 'signalgate');
    expect(existsSync(path.join(installed, 'src'))).toBe(false);
    expect(existsSync(path.join(installed, 'node_modules', 'typescript'))).toBe(false);
    const help = run(['--help']);
    expect(help.status, help.stderr).toBe(0);
    expect(help.stdout).toMatch(/^Usage: signalgate /);
    for (const verb of ['serve', 'agent', 'accounts', 'sources', 'parse', 'simulate', 'backup'])
      expect(help.stdout).toContain(`  ${verb}`);
  });

  it('parses a signal', () => {
    const parsed = run(['parse', 'EURUSD,buy,vol=0.1']);
    expect(parsed.status, parsed.stderr).toBe(0);
    expect(JSON.parse(parsed.stdout)).toEqual({
      symbol: 'EURUSD',
      action: 'buy',
      volume: { type: 'lots', value: 0.1 },
    });
  });

  it('serves (store migrated, dashboard found) and the admin commands reach its store', async () => {
    const env = {
      SIGNALGATE_DATA_DIR: path.join(root, 'data'),
      SIGNALGATE_ADMIN_TOKEN: 'installed-admin-token-0123456789abcdef',
      HOST: '127.0.0.1',
      PORT: '0',
    };
    const server = spawn(command, ['serve'], {
      cwd: elsewhere,
      env: { ...cleanEnv(), ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    server.stdout.on('data', (d: Buffer) => (out += d.toString()));
    server.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const exited = new Promise<number | null>((resolve) => server.on('close', (code) => resolve(code)));
    try {
      let url: string | undefined;
      for (let i = 0; !url; i++) {
        if (i > 300 || server.exitCode !== null) throw new Error(`the installed server did not start:\n${out}\n${err}`);
        await new Promise((resolve) => setTimeout(resolve, 100));
        url = out
          .split('\n')
          .flatMap((line) =>
            line.includes('"msg":"listening"') ? [(JSON.parse(line) as { url: string }).url] : [],
          )[0];
      }
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(200);
      expect(await health.json()).toEqual({ status: 'ok', store: 'sqlite' });
      expect((await fetch(`${url}/`)).status).toBe(200);

      const created = run(['accounts', 'create', '--name', 'Installed', '--quota', '10'], env);
      expect(created.status, created.stderr).toBe(0);
      const account = JSON.parse(created.stdout) as { id: string };
      const listed = await fetch(`${url}/api/admin/accounts/${account.id}`, {
        headers: { authorization: `Bearer ${env.SIGNALGATE_ADMIN_TOKEN}` },
      });
      expect(listed.status).toBe(200);
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 60_000);
});
