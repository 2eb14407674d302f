import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { accountWithAgents, postSignal, sourceFor, type TestAgent } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { startUp } from './support/start-up.js';
import { useAgentTestBed } from './support/agent-test-bed.js';
import { readJournal } from './support/journal-file.js';

const CLI = path.resolve('dist/cli/main.js');

/** Where the agent keeps `token`'s account under `dataDir`. */
function accountDir(dataDir: string, token: string): string {
  return path.join(dataDir, 'agents', `agent-${createHash('sha256').update(token).digest('hex').slice(0, 16)}`);
}

/** `signalgate agent …` run to its end with a short deadline (flag errors need no server). */
function runAgentCli(args: string[], dataDir = '/nonexistent-signalgate-data') {
  const run = spawnSync(process.execPath, [CLI, 'agent', ...args], {
    env: { ...process.env, SIGNALGATE_DATA_DIR: dataDir, SIGNALGATE_AGENT_TOKEN: '' },
    encoding: 'utf8',
    timeout: 15_000,
    // SIGTERM waits for the start; a start that hangs would hold the test for ever.
    killSignal: 'SIGKILL',
  });
  return { code: run.status, stderr: run.stderr };
}

describe('a paper agent restarted with other flags than its stored account', () => {
  const bed = useAgentTestBed();
  const decoys: ChildProcess[] = [];
  afterEach(() => {
    for (const decoy of decoys.splice(0)) decoy.kill('SIGKILL');
  });

  async function newAgent(): Promise<{ agent: TestAgent; accountId: string }> {
    const { accountId, agents } = await accountWithAgents(bed.server, ['paper']);
    return { agent: agents[0]!, accountId };
  }

  /** Runs the agent until it is connected (and its ticks at one instant applied), then stops it with SIGTERM. */
  async function runOnce(agent: TestAgent, dir: string, args: string[]): Promise<AgentProcess> {
    const first = bed.startAgent(bed.server.url, agent.token, dir, args);
    await first.connected();
    if (args.includes('--ticks'))
      await first.waitForLog(
        (l) => l.msg === 'the ticks file is played out; prices stay where they are',
        'the ticks applied',
      );
    expect((await first.stop()).code).toBe(0);
    return first;
  }

  function ticksFile(dir: string, name: string, prices: number[]): string {
    const file = path.join(dir, name);
    // One instant: the whole file plays at start-up, so the stored count is the file's length.
    writeFileSync(
      file,
      [
        'time,symbol,bid,ask',
        ...prices.map((p) => `2024-03-01T09:30:00Z,EURUSD,${p.toFixed(5)},${(p + 0.0002).toFixed(5)}`),
      ].join('\n') + '\n',
    );
    return file;
  }

  it('refuses another ticks file (exit 2, naming both files) instead of skipping as many of its ticks as the old one had', async () => {
    const { agent } = await newAgent();
    const dir = bed.stateDir();
    const old = ticksFile(dir, 'old.csv', [1.1, 1.101, 1.102, 1.103]);
    await runOnce(agent, dir, ['--ticks', old]);
    const other = ticksFile(dir, 'new.csv', [1.2, 1.201]);
    const restarted = bed.startAgent(bed.server.url, agent.token, dir, ['--ticks', other]);
    expect(await startUp(restarted)).toBe(2);
    expect(restarted.stderr).toContain(old);
    expect(restarted.stderr).toContain(other);
    expect(restarted.stderr).toMatch(
      /restart with the same file, or start a new paper account with a fresh SIGNALGATE_DATA_DIR/,
    );
  });

  it('resumes the same ticks file (by content, wherever it lies now) after the ticks it applied', async () => {
    const { agent } = await newAgent();
    const dir = bed.stateDir();
    const file = ticksFile(dir, 'ticks.csv', [1.1, 1.101, 1.102]);
    await runOnce(agent, dir, ['--ticks', file]);
    const moved = path.join(dir, 'moved.csv');
    copyFileSync(file, moved);
    const restarted = bed.startAgent(bed.server.url, agent.token, dir, ['--ticks', moved]);
    expect(await startUp(restarted)).toBe('connected');
    // All three were applied before: nothing is replayed again.
    await restarted.waitForLog(
      (l) => l.msg === 'the ticks file is played out; prices stay where they are',
      'the end of the file',
    );
    const account = readJournal(path.join(accountDir(dir, agent.token), 'paper-account.json'));
    expect(account.feed).toMatchObject({
      kind: 'ticks-file',
      applied: 3,
      sha256: createHash('sha256').update(readFileSync(file)).digest('hex'),
    });
    expect(account.engine.quotes.EURUSD).toEqual({ bid: 1.102, ask: 1.1022 });
  });

  it('refuses to switch between a ticks file and the random walk, either way', async () => {
    const { agent } = await newAgent();
    const dir = bed.stateDir();
    const file = ticksFile(dir, 'ticks.csv', [1.1]);
    await runOnce(agent, dir, ['--ticks', file]);
    const walk = bed.startAgent(bed.server.url, agent.token, dir, ['--seed', '1']);
    expect(await startUp(walk)).toBe(2);
    expect(walk.stderr).toContain(`restart with --ticks ${file}`);

    const other = (await newAgent()).agent;
    const walkDir = bed.stateDir();
    await runOnce(other, walkDir, ['--seed', '1']);
    const ticks = bed.startAgent(bed.server.url, other.token, walkDir, ['--ticks', file]);
    expect(await startUp(ticks)).toBe(2);
    expect(ticks.stderr).toMatch(
      /trades on the random walk, and --ticks .*ticks\.csv would replace its prices: restart without --ticks/,
    );
  });

  it('refuses another symbol map while positions are open on the mapped symbol, and takes it when none are', async () => {
    const { agent, accountId } = await newAgent();
    const source = await sourceFor(bed.server, accountId);
    const dir = bed.stateDir();
    const instruments = path.join(dir, 'instruments.json');
    writeFileSync(instruments, JSON.stringify({ symbolMap: { EURUSD: 'EURUSD.m' } }));
    const first = bed.startAgent(bed.server.url, agent.token, dir, ['--seed', '1', '--instruments', instruments]);
    await first.connected();
    const bought = await postSignal(bed.server.url, source.authKey, 'EURUSD,buy,vol=0.1');
    expect(await first.waitForLog((l) => l.msg === 'signal handled' && l.signalId === bought, 'the buy')).toMatchObject(
      { status: 'executed' },
    );
    expect((await first.stop()).code).toBe(0);

    const unmapped = bed.startAgent(bed.server.url, agent.token, dir, ['--seed', '1']);
    expect(await startUp(unmapped)).toBe(2);
    expect(unmapped.stderr).toContain('1 open position(s) or order(s) on EURUSD.m');
    expect(unmapped.stderr).toContain(`symbol map EURUSD→EURUSD.m from ${instruments}`);
    expect(unmapped.stderr).toContain('no symbol map, without --instruments');

    // Back with the map, the position is managed and closed as usual; then the map may go.
    const mapped = bed.startAgent(bed.server.url, agent.token, dir, ['--instruments', instruments]);
    await mapped.connected();
    const closed = await postSignal(bed.server.url, source.authKey, 'EURUSD,closebuy');
    expect(
      await mapped.waitForLog((l) => l.msg === 'signal handled' && l.signalId === closed, 'the close'),
    ).toMatchObject({
      status: 'executed',
      message: expect.stringMatching(/^closed position 1:/),
    });
    expect((await mapped.stop()).code).toBe(0);
    const plain = bed.startAgent(bed.server.url, agent.token, dir);
    expect(await startUp(plain)).toBe('connected');
    expect(plain.lines().some((l) => l.msg.startsWith('the instruments changed since the last run'))).toBe(true);
  });

  it('refuses a --currency the feed cannot price (exit 2, naming the ones it can)', async () => {
    const { agent } = await newAgent();
    const dir = bed.stateDir();
    const walk = bed.startAgent(bed.server.url, agent.token, dir, ['--currency', 'EUD']);
    expect(await startUp(walk)).toBe(2);
    expect(walk.stderr).toContain(
      '--currency EUD: the built-in reference prices can only price AUD, BTC, CAD, CHF, ETH, EUR, GBP, JPY, NZD, USD',
    );

    const file = ticksFile(dir, 'ticks.csv', [1.1]);
    const ticks = bed.startAgent(bed.server.url, agent.token, dir, ['--ticks', file, '--currency', 'jpy']);
    expect(await startUp(ticks)).toBe(2);
    expect(ticks.stderr).toContain(`--currency JPY: ${file} can only price EUR, USD`);
    // Neither run made an account.
    expect(() => readFileSync(path.join(accountDir(dir, agent.token), 'paper-account.json'))).toThrow(/ENOENT/);
  });

  it('warns when --balance or --currency differ from the stored account, which keeps its own', async () => {
    const { agent } = await newAgent();
    const dir = bed.stateDir();
    await runOnce(agent, dir, ['--seed', '1']);
    const restarted = bed.startAgent(bed.server.url, agent.token, dir, ['--balance', '5000', '--currency', 'EUR']);
    await restarted.connected();
    const warnings = restarted
      .lines()
      .filter((l) => l.level === 40)
      .map((l) => l.msg);
    expect(warnings).toEqual([
      expect.stringMatching(
        /^--balance 5000 differs from the stored balance 10000: the stored value is kept .*fresh SIGNALGATE_DATA_DIR/,
      ),
      expect.stringMatching(/^--currency EUR differs from the stored currency USD: the stored value is kept/),
    ]);
    expect(restarted.lines().find((l) => l.msg === 'paper account ready')).toMatchObject({
      balance: 10000,
      currency: 'USD',
      resumed: true,
    });
  });

  it("takes over an earlier version's lock whose pid now belongs to an unrelated process, and still refuses a live agent", async () => {
    const { agent } = await newAgent();
    const dir = bed.stateDir();
    const decoy = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    decoys.push(decoy);
    const lock = path.join(accountDir(dir, agent.token), 'agent.lock');
    mkdirSync(path.dirname(lock), { recursive: true });
    // What an agent of an earlier version killed before left: its pid, since given to another process.
    writeFileSync(lock, String(decoy.pid));
    const first = bed.startAgent(bed.server.url, agent.token, dir);
    expect(await startUp(first)).toBe('connected');
    expect(first.lines().find((l) => l.msg === 'took over the lock of an agent that is gone')?.reason).toContain(
      `pid ${decoy.pid}`,
    );

    const second = bed.startAgent(bed.server.url, agent.token, dir);
    expect(await startUp(second)).toBe(1);
    expect(second.stderr).toContain(`another agent (pid ${first.child.pid}) is running`);
  });

  it('names a damaged paper-account.json and says what to do (exit 1)', async () => {
    const { agent } = await newAgent();
    const dir = bed.stateDir();
    const account = path.join(accountDir(dir, agent.token), 'paper-account.json');
    mkdirSync(path.dirname(account), { recursive: true });
    writeFileSync(account, '{"version":1,"engine":{,');
    const broken = bed.startAgent(bed.server.url, agent.token, dir);
    expect(await startUp(broken)).toBe(1);
    expect(broken.stderr).toContain(`signalgate agent: ${account} is damaged (`);
    expect(broken.stderr).toContain(
      'restore it from a backup, or start a new paper account with a fresh SIGNALGATE_DATA_DIR',
    );
  });
});

describe('the flags of signalgate agent', () => {
  const bed = useAgentTestBed();

  it("exit 2 on every flag error, commander's own included", () => {
    const server = ['--server', 'http://127.0.0.1:9', '--paper', '--token', 'x'];
    const cases: Array<[string[], RegExp]> = [
      [[...server, '--bogus'], /unknown option '--bogus'/],
      [['--paper', '--token', 'x'], /required option '--server <url>' not specified/],
      [[...server, '--balance'], /option '--balance <amount>' argument missing/],
      [[...server, '--balance', '-5'], /--balance must be a number above 0/],
    ];
    for (const [args, message] of cases) {
      const run = runAgentCli(args);
      expect({ args, code: run.code }).toEqual({ args, code: 2 });
      expect(run.stderr).toMatch(message);
    }
    expect(runAgentCli(['--help']).code).toBe(0);
  });

  it('name an empty ticks file without a line number', () => {
    const dir = bed.stateDir();
    const empty = path.join(dir, 'empty.csv');
    writeFileSync(empty, 'time,symbol,bid,ask\n');
    const run = runAgentCli(['--server', 'http://127.0.0.1:9', '--paper', '--token', 'x', '--ticks', empty], dir);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`signalgate agent: ${empty}: holds no ticks`);
  });

  it('a data directory under /proc fails at once naming SIGNALGATE_DATA_DIR (a recursive mkdir there never returns)', async () => {
    // The token is checked first (nothing is created for a refused one), so the server is up.
    const { agents } = await accountWithAgents(bed.server, ['proc']);
    const started = Date.now();
    const agent = bed.startAgent(bed.server.url, agents[0]!.token, '/proc/signalgate/data');
    expect((await agent.exited).code).toBe(1);
    const run = { stderr: agent.stderr };
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(run.stderr).toContain(
      "signalgate agent: cannot create the paper account's directory /proc/signalgate/data/agents/",
    );
    expect(run.stderr).toContain('in SIGNALGATE_DATA_DIR=/proc/signalgate/data');
  });
});
