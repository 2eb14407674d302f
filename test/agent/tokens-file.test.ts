import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { AgentProcess } from './support/agent-process.js';
import { useAgentTestBed } from './support/agent-test-bed.js';
import { journalComments, tokenFolder } from './support/journal-file.js';
import { startUp } from './support/start-up.js';

const CLI = path.resolve('dist/cli/main.js');
const ERROR = 50;
const WARN = 40;

/** `signalgate agent --paper --tokens-file FILE` (several paper agents in one process). */
describe('several paper agents in one process (--tokens-file)', () => {
  const bed = useAgentTestBed();
  const started: AgentProcess[] = [];
  afterEach(async () => {
    for (const agent of started.splice(0)) await agent.kill();
  });

  function tokensFile(dir: string, lines: string[]): string {
    const file = path.join(dir, 'tokens');
    writeFileSync(file, lines.join('\n') + '\n', { mode: 0o600 });
    return file;
  }

  function startGroup(file: string, dataDir: string, env: Record<string, string> = {}): AgentProcess {
    const agent = AgentProcess.startExactly(
      ['--server', bed.server.url, '--paper', '--seed', '3', '--tokens-file', file],
      {
        SIGNALGATE_DATA_DIR: dataDir,
        SIGNALGATE_AGENT_TOKEN: '',
        ...env,
      },
    );
    started.push(agent);
    return agent;
  }

  /** Waits until the agents of these lines of the tokens file are connected. */
  async function connected(agent: AgentProcess, lines: number[]): Promise<void> {
    for (const line of lines)
      await agent.waitForLog(
        (l) => l.msg === 'connected' && l.tokensFileLine === line,
        `the agent of line ${line} connected`,
      );
  }

  /** Two accounts, each with one agent and one source. */
  async function twoAccounts() {
    const made = [];
    for (let i = 0; i < 2; i++) {
      const { accountId, agents } = await accountWithAgents(bed.server, ['paper']);
      made.push({ token: agents[0]!.token, authKey: (await sourceFor(bed.server, accountId)).authKey });
    }
    return made as [(typeof made)[0], (typeof made)[0]];
  }

  const executed = (ids: string[]) =>
    waitUntil(
      async () =>
        (await Promise.all(ids.map((id) => deliveriesOf(bed.server, id)))).every(([d]) => d.status === 'executed'),
      'every signal executed',
      60_000,
    );

  it("runs one agent per token: each executes its own account's signals into its own file; SIGTERM exits 0", async () => {
    const [a, b] = await twoAccounts();
    const dir = bed.stateDir();
    const file = tokensFile(dir, ['# the desk', '', a.token, b.token]);
    const group = startGroup(file, dir);
    await connected(group, [3, 4]);

    const toA = await postSignal(bed.server.url, a.authKey, 'EURUSD,buy,vol=0.1,comment=a1');
    const toB = await postSignal(bed.server.url, b.authKey, 'GBPUSD,sell,vol=0.1,comment=b1');
    await executed([toA, toB]);
    const handledBy = new Map(group.handled().map((l) => [l.signalId, l.tokensFileLine]));
    expect(handledBy.get(toA)).toBe(3);
    expect(handledBy.get(toB)).toBe(4);
    expect(journalComments(dir, a.token)).toEqual(['a1']);
    expect(journalComments(dir, b.token)).toEqual(['b1']);
    expect((await group.stop()).code).toBe(0);
  });

  it('takes up the account a token had in a process of its own; a file others may read is used, with a warning', async () => {
    const [a] = await twoAccounts();
    const dir = bed.stateDir();
    const alone = bed.startAgent(bed.server.url, a.token, dir, ['--seed', '3']);
    await alone.connected();
    await executed([await postSignal(bed.server.url, a.authKey, 'EURUSD,buy,vol=0.1,comment=alone')]);
    expect((await alone.stop()).code).toBe(0);

    const file = tokensFile(dir, [a.token]);
    chmodSync(file, 0o644);
    const group = startGroup(file, dir);
    await connected(group, [1]);
    expect(
      group
        .lines()
        .some(
          (l) =>
            l.level === WARN &&
            l.msg === `--tokens-file ${file} can be read by other users of this machine; chmod 600 it`,
        ),
    ).toBe(true);
    await executed([await postSignal(bed.server.url, a.authKey, 'EURUSD,buy,vol=0.1,comment=together')]);
    expect(journalComments(dir, a.token)).toEqual(['alone', 'together']);
  });

  it('killed with SIGKILL amid signals, started again: every signal of every account executed exactly once', async () => {
    const [a, b] = await twoAccounts();
    const dir = bed.stateDir();
    const file = tokensFile(dir, [a.token, b.token]);
    const first = startGroup(file, dir);
    await connected(first, [1, 2]);
    const ids: string[] = [];
    for (let i = 1; i <= 8; i++) {
      ids.push(await postSignal(bed.server.url, a.authKey, `EURUSD,buy,vol=0.1,comment=a${i}`));
      ids.push(await postSignal(bed.server.url, b.authKey, `USDJPY,buy,vol=0.1,comment=b${i}`));
    }
    await first.waitForHandled(1);
    await first.kill();
    const second = startGroup(file, dir);
    await executed(ids);
    const all = (prefix: string) => Array.from({ length: 8 }, (_, i) => `${prefix}${i + 1}`);
    expect(journalComments(dir, a.token).sort()).toEqual(all('a').sort());
    expect(journalComments(dir, b.token).sort()).toEqual(all('b').sort());
    // Whatever the first process executed, the second did not execute again.
    const twice = second.handled().filter((l) => first.handled().some((f) => f.signalId === l.signalId));
    expect(twice).toEqual([]);
  });

  it('an agent whose token the server refuses stops alone, said at error; the others go on; all refused exits 2', async () => {
    const [a] = await twoAccounts();
    const dir = bed.stateDir();
    const group = startGroup(tokensFile(dir, ['sg_agent_not-a-token', a.token]), dir);
    const refused = await group.waitForLog(
      (l) => l.level === ERROR && l.tokensFileLine === 1,
      'the refused agent said at error',
    );
    expect(refused.msg).toBe(
      'the server refused the agent token: this agent stopped; the others in this process go on',
    );
    await connected(group, [2]);
    const id = await postSignal(bed.server.url, a.authKey, 'EURUSD,buy,vol=0.1,comment=still');
    await executed([id]);
    expect(journalComments(dir, a.token)).toEqual(['still']);
    expect((await group.stop()).code).toBe(0);

    const none = startGroup(tokensFile(bed.stateDir(), ['sg_agent_one-wrong', 'sg_agent_two-wrong']), bed.stateDir());
    expect(await startUp(none)).toBe(2);
    expect(none.stderr).toContain('the server refused the agent token');
  });

  it('an agent that fails otherwise (its folder cannot be made) stops alone too; when every agent failed, exit 1', async () => {
    const [a, b] = await twoAccounts();
    const dir = bed.stateDir();
    const blocked = tokenFolder(dir, b.token);
    mkdirSync(path.dirname(blocked), { recursive: true, mode: 0o700 });
    writeFileSync(blocked, 'not a folder');
    const group = startGroup(tokensFile(dir, [a.token, b.token]), dir);
    const failed = await group.waitForLog((l) => l.level === ERROR && l.tokensFileLine === 2, 'the failed agent');
    expect(failed.msg).toBe('agent failed: this agent stopped; the others in this process go on');
    expect(failed.err).toContain(`cannot create the paper account's directory ${blocked}`);
    await connected(group, [1]);
    const id = await postSignal(bed.server.url, a.authKey, 'EURUSD,buy,vol=0.1,comment=alone');
    await executed([id]);
    expect((await group.stop()).code).toBe(0);

    const alone = startGroup(tokensFile(bed.stateDir(), [b.token]), dir);
    expect((await alone.exited).code).toBe(1);
    expect(alone.stderr).toContain(`cannot create the paper account's directory ${blocked}`);
  });
});

describe('a tokens file the agent refuses (exit 2, nothing started)', () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-tokens-'));
    dirs.push(dir);
    return dir;
  };
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });

  function run(args: string[], env: Record<string, string> = {}) {
    const result = spawnSync(process.execPath, [CLI, 'agent', '--server', 'http://127.0.0.1:9', ...args], {
      env: { ...process.env, SIGNALGATE_DATA_DIR: tempDir(), SIGNALGATE_AGENT_TOKEN: '', ...env },
      encoding: 'utf8',
      timeout: 15_000,
      killSignal: 'SIGKILL',
    });
    return { code: result.status, stderr: result.stderr };
  }

  function file(text: string): string {
    const name = path.join(tempDir(), 'tokens');
    writeFileSync(name, text, { mode: 0o600 });
    return name;
  }

  it.each([
    [
      'the same token twice',
      'tok-a\n# x\ntok-a\n',
      /lines 1 and 3 hold the same token; an agent runs once, so remove one/,
    ],
    ['two words on a line', 'tok-a tok-b\n', /line 1 holds more than a token; write one agent token per line/],
    ['no token', '# only a comment\n\n', /holds no token; write one agent token per line/],
  ])('%s', (_, text, message) => {
    const result = run(['--paper', '--tokens-file', file(text)]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(message);
  });

  it('a file that is not there', () => {
    const result = run(['--paper', '--tokens-file', '/nonexistent/tokens']);
    expect(result).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--tokens-file /nonexistent/tokens: no such file'),
    });
  });

  it('a token given another way as well', () => {
    const tokens = file('tok-a\n');
    for (const [args, env, other] of [
      [['--token-file', tokens], {}, '--token-file'],
      [[], { SIGNALGATE_AGENT_TOKEN: 'tok-b' }, 'SIGNALGATE_AGENT_TOKEN'],
    ] as const) {
      const result = run(['--paper', '--tokens-file', tokens, ...args], env);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(
        `give the agent tokens one way: --tokens-file FILE (several agents) or ${other} (one agent)`,
      );
    }
  });

  it('on an exchange or a broker: one process per account', () => {
    const tokens = file('tok-a\n');
    for (const venue of [
      ['--venue', 'ccxt', '--exchange', 'binanceusdm'],
      ['--venue', 'fix', '--fix-config', tokens],
    ]) {
      const result = run([...venue, '--tokens-file', tokens]);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain('--tokens-file runs several paper accounts in one process');
    }
  });
});
