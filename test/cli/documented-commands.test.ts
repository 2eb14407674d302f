import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * The docs run the `signalgate` command, which `npm link` in a clone (or `npm install -g` of the
 * packed tarball, tested in test/build/installed-command.test.ts) puts on the PATH. Here a
 * directory on the PATH holds a `signalgate` that runs this checkout's build, as `npm link` would.
 */
const BIN = mkdtempSync(path.join(tmpdir(), 'signalgate-bin-'));
writeFileSync(
  path.join(BIN, 'signalgate'),
  `#!/bin/sh\nexec "${process.execPath}" "${path.resolve('dist/cli/main.js')}" "$@"\n`,
  { mode: 0o755 },
);
afterAll(() => rmSync(BIN, { recursive: true, force: true }));

function markdownFiles(): string[] {
  const files = ['README.md'];
  const walk = (dir: string) => {
    if (!existsSync(dir)) return;
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.md')) files.push(full);
    }
  };
  walk('docs');
  return files;
}

describe('the documented commands', () => {
  // A command (`npx signalgate parse …`), not a sentence that names the form to avoid.
  it('never use npx signalgate, which can run a public package of that name', () => {
    const found = markdownFiles().flatMap((file) =>
      readFileSync(file, 'utf8')
        .split('\n')
        .flatMap((line, index) =>
          /\bnpx\s+signalgate\s+[a-z]|\bnpm\s+exec\s+.*\bsignalgate\s+[a-z]/.test(line)
            ? [`${file}:${index + 1}: ${line.trim()}`]
            : [],
        ),
    );
    expect(found).toEqual([]);
  });

  it("run the project's own CLI in the documented form", () => {
    const run = spawnSync('signalgate', ['parse', 'EURUSD,buy'], { encoding: 'utf8', env: shellEnv() });
    expect(run.status).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ symbol: 'EURUSD', action: 'buy' });
  });
});

/** The body of the first ```LANG block after `marker` in `text`. */
function blockAfter(text: string, marker: string, lang = 'sh'): string {
  const at = text.indexOf(marker);
  if (at < 0) throw new Error(`no '${marker}' in the page`);
  const start = text.indexOf(`\`\`\`${lang}\n`, at);
  if (start < 0) throw new Error(`no \`\`\`${lang} block after '${marker}'`);
  const body = start + lang.length + 4;
  return text.slice(body, text.indexOf('```\n', body));
}

/** Indented blocks (inside a list item) as the shell gets them when pasted. */
function dedent(block: string): string {
  const indent = Math.min(
    ...block
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map((line) => /^ */.exec(line)![0].length),
  );
  return block
    .split('\n')
    .map((line) => line.slice(indent))
    .join('\n');
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as net.AddressInfo;
      probe.close(() => resolve(port));
    });
  });
}

/**
 * A directory to paste commands in, as a user's checkout would be: `dist` there is this
 * checkout's build; `./data` and any file the commands write are its own.
 */
function pasteDirectory(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-pasted-'));
  symlinkSync(path.resolve('dist'), path.join(dir, 'dist'));
  return dir;
}

/** The environment of a fresh shell: nothing of the test's own signalgate settings. */
function shellEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env };
  for (const name of Object.keys(env))
    if (name.startsWith('SIGNALGATE_') || name === 'HOST' || name === 'PORT') delete env[name];
  return { ...env, PATH: `${BIN}:${env.PATH}`, ...extra };
}

/**
 * Runs `script` with `bash -e` in its own process group, so what it leaves running in the
 * background (a server, an agent) can be stopped with it afterwards.
 */
function runPasted(script: string, cwd: string, env: NodeJS.ProcessEnv, timeoutMs = 90_000) {
  const child = spawn('bash', ['-e', '-c', script], { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      // The script ended; its pipes may stay open while its background jobs run.
      setTimeout(() => resolve({ code, stdout, stderr }), 200);
    }),
  );
  const stopGroup = (signal: NodeJS.Signals = 'SIGTERM') => {
    try {
      process.kill(-child.pid!, signal);
    } catch {
      // Nothing of the group is left.
    }
  };
  return { done, stopGroup, output: () => ({ stdout, stderr }) };
}

const README = readFileSync('README.md', 'utf8');
const OPERATIONS = readFileSync('docs/operations.md', 'utf8');

describe.runIf(process.env.SIGNALGATE_TEST_STORE !== 'postgres')('the documented commands, pasted into a shell', () => {
  const dirs: string[] = [];
  const groups: Array<(signal?: NodeJS.Signals) => void> = [];
  afterAll(async () => {
    for (const stop of groups) stop('SIGTERM');
    await new Promise((resolve) => setTimeout(resolve, 1000));
    for (const stop of groups) stop('SIGKILL');
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('serve --help names every setting of operations.md', () => {
    const table = OPERATIONS.slice(OPERATIONS.indexOf('## Settings'), OPERATIONS.indexOf('## HTTPS'));
    const names = [...table.matchAll(/^\| `([A-Z_]+)`(?:, `([A-Z_]+)`)? \|/gm)].flatMap((m) => [
      m[1]!,
      ...(m[2] ? [m[2]] : []),
    ]);
    expect(names.length).toBeGreaterThan(10);
    const help = spawnSync('signalgate', ['serve', '--help'], { encoding: 'utf8', env: shellEnv() }).stdout.replace(
      /\s+/g,
      ' ',
    );
    expect(names.filter((name) => !help.includes(name))).toEqual([]);
  });

  it("the README's quick start: a paper trade, from an empty directory, the server started as written", async () => {
    const written = blockAfter(README, '## Quick start');
    expect(written).toContain('export PORT=8080');
    expect(written).toMatch(/^signalgate serve &/m);
    // The one change: the port, so the test takes a free one (the block says PORT is the port).
    const script = written.replace('export PORT=8080', `export PORT=${await freePort()}`);
    const dir = pasteDirectory();
    dirs.push(dir);
    const run = runPasted(script, dir, shellEnv());
    groups.push(run.stopGroup);
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr.slice(-3000)).toBe(0);
    expect(stdout).toMatch(/"outcome":\{"executed":1\}/);
    expect(stdout).toMatch(
      /"status":"executed","expiresAt":"[^"]+","deliveredAt":"[^"]+","attempts":1,"ackedAt":"[^"]+","message":"opened buy 0\.1 EURUSD at /,
    );
    // The server's listening line names the pid the README says to signal, the server's own.
    const listening = stdout.split('\n').find((line) => line.includes('"msg":"listening"'));
    expect(listening).toMatch(/"pid":\d+/);
  });

  it("engine.md's simulate example prints the lines it shows", async () => {
    const engine = readFileSync('docs/engine.md', 'utf8');
    const dir = pasteDirectory();
    dirs.push(dir);
    const run = runPasted(blockAfter(engine, 'Example: two files'), dir, shellEnv());
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr).toBe(0);
    const shown = blockAfter(engine, 'print, before the closing', '').trim().split('\n');
    expect(stdout.trim().split('\n').slice(0, -1)).toEqual(shown);
  });

  it("inbound-api.md's way to test a source that takes only TradingView's addresses", async () => {
    const env = shellEnv({ SIGNALGATE_ADMIN_TOKEN: 'pasted-admin-token-0123456789', PORT: String(await freePort()) });
    const dir = pasteDirectory();
    dirs.push(dir);
    const server = runPasted('signalgate serve', dir, env);
    groups.push(server.stopGroup);
    const base = `http://127.0.0.1:${env.PORT}`;
    const cli = (...args: string[]) => {
      const ran = spawnSync(process.execPath, [path.resolve('dist/cli/main.js'), ...args], {
        cwd: dir,
        env,
        encoding: 'utf8',
      });
      if (ran.status !== 0) throw new Error(`${args.join(' ')}: ${ran.stderr}`);
      return JSON.parse(ran.stdout);
    };
    for (
      let i = 0;
      !(await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      ));
      i++
    ) {
      if (i > 300) throw new Error(`the server did not start: ${server.output().stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    const account = cli('accounts', 'create', '--name', 'Desk', '--quota', '10');
    const source = cli(
      'sources',
      'create',
      '--account',
      account.id,
      '--name',
      'TradingView',
      '--allowed-ips',
      'tradingview',
    );
    const send = () => fetch(source.inboundUrl, { method: 'POST', body: 'EURUSD,buy' });

    const refused = await send();
    expect(refused.status).toBe(403);
    expect(((await refused.json()) as { detail: string }).detail).toContain('127.0.0.1');

    const inbound = readFileSync('docs/inbound-api.md', 'utf8');
    const [allow, , takeAway] = blockAfter(inbound, 'Testing a source that takes only').trim().split('\n');
    const steps = { SOURCE: source.id, MY_IP: '127.0.0.1' };
    expect((await runPasted(allow!, dir, { ...env, ...steps }).done).code).toBe(0);
    expect((await send()).status).toBe(202);
    expect((await runPasted(takeAway!, dir, { ...env, ...steps }).done).code).toBe(0);
    expect((await send()).status).toBe(403);
  });

  it("operations.md's backup, then its restore after a clean stop, bring back what was backed up", async () => {
    const start = blockAfter(OPERATIONS, 'In a shell, start the server');
    const backup = blockAfter(OPERATIONS, 'To back up and restore');
    const restore = blockAfter(OPERATIONS, 'signalgate backup signalgate-backup.db');
    const ready = 'until curl -sf http://127.0.0.1:$PORT/readyz >/dev/null; do sleep 0.2; done';
    const script = [
      start,
      ready,
      'signalgate accounts create --name "Backed up" --quota 10',
      dedent(backup),
      'signalgate accounts create --name "After the backup" --quota 10',
      dedent(restore),
      ready,
      'echo "restored store:"',
      'signalgate accounts list',
      'kill $PID; while kill -0 $PID 2>/dev/null; do sleep 0.2; done',
    ].join('\n');
    const dir = pasteDirectory();
    dirs.push(dir);
    const run = runPasted(
      script,
      dir,
      shellEnv({ SIGNALGATE_ADMIN_TOKEN: 'pasted-admin-token-0123456789', PORT: String(await freePort()) }),
    );
    groups.push(run.stopGroup);
    const { code, stdout, stderr } = await run.done;
    expect(code, stderr.slice(-3000)).toBe(0);
    const restored = stdout.slice(stdout.indexOf('restored store:'));
    expect(restored).toContain('"name": "Backed up"');
    expect(restored).not.toContain('"name": "After the backup"');
    expect(readdirSync(path.join(dir, 'data.before-restore'))).toContain('signalgate.db');
  });
});
