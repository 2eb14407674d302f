import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { accountWithAgents } from '../delivery/support/delivery-setup.js';
import { AgentProcess } from './support/agent-process.js';
import { useAgentTestBed } from './support/agent-test-bed.js';

const WARN = 40;

describe('how the agent is given its token', () => {
  const bed = useAgentTestBed();
  const started: AgentProcess[] = [];
  afterEach(async () => {
    for (const agent of started.splice(0)) await agent.kill();
  });

  function start(args: string[], env: Record<string, string> = {}): AgentProcess {
    const agent = AgentProcess.startExactly(['--server', bed.server.url, '--paper', ...args], {
      SIGNALGATE_DATA_DIR: bed.stateDir(),
      SIGNALGATE_AGENT_TOKEN: '',
      ...env,
    });
    started.push(agent);
    return agent;
  }

  /** What every user of the machine can read of the process: its command line. */
  const commandLine = (agent: AgentProcess) => readFileSync(`/proc/${agent.child.pid}/cmdline`, 'utf8');
  const tokenWarnings = (agent: AgentProcess) => agent.lines().filter((l) => l.level === WARN && /token/.test(l.msg));

  function tokenFile(token: string, mode: number): string {
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-token-'));
    const file = path.join(dir, 'token');
    writeFileSync(file, `${token}\n`);
    chmodSync(file, mode);
    return file;
  }

  it('from SIGNALGATE_AGENT_TOKEN: connects, no warning, the token not on its command line', async () => {
    const { agents } = await accountWithAgents(bed.server, ['env']);
    const agent = start([], { SIGNALGATE_AGENT_TOKEN: agents[0]!.token });
    await agent.connected();
    expect(commandLine(agent)).not.toContain(agents[0]!.token);
    expect(tokenWarnings(agent)).toEqual([]);
  });

  it('from --token-file (mode 600): connects, no warning, the token not on its command line', async () => {
    const { agents } = await accountWithAgents(bed.server, ['file']);
    const file = tokenFile(agents[0]!.token, 0o600);
    try {
      const agent = start(['--token-file', file]);
      await agent.connected();
      expect(commandLine(agent)).not.toContain(agents[0]!.token);
      expect(tokenWarnings(agent)).toEqual([]);
    } finally {
      rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('from a --token-file others may read: connects, and warns to chmod 600 it', async () => {
    const { agents } = await accountWithAgents(bed.server, ['loose']);
    const file = tokenFile(agents[0]!.token, 0o644);
    try {
      const agent = start(['--token-file', file]);
      await agent.connected();
      expect(tokenWarnings(agent).map((l) => l.msg)).toEqual([
        `--token-file ${file} can be read by other users of this machine; chmod 600 it`,
      ]);
    } finally {
      rmSync(path.dirname(file), { recursive: true, force: true });
    }
  });

  it('from --token: still connects, with a warning saying why and what to use instead', async () => {
    const { agents } = await accountWithAgents(bed.server, ['flag']);
    const agent = start(['--token', agents[0]!.token]);
    await agent.connected();
    const [warning, ...more] = tokenWarnings(agent);
    expect(more).toEqual([]);
    expect(warning!.msg).toMatch(
      /^--token puts the agent token in the process list, where every user of this machine can read it/,
    );
    expect(warning!.msg).toContain('SIGNALGATE_AGENT_TOKEN');
    expect(warning!.msg).toContain('--token-file');
    // The warning never repeats the token itself.
    expect(agent.stdout).not.toContain(agents[0]!.token);
  });

  it('refuses --token with --token-file, a missing file and no token at all, with exit 2 and what to do', async () => {
    const both = start(['--token', 'sga_x', '--token-file', '/etc/hostname']);
    expect((await both.exited).code).toBe(2);
    expect(both.stderr).toContain('give the agent token one way');
    const missing = start(['--token-file', '/nonexistent/token']);
    expect((await missing.exited).code).toBe(2);
    expect(missing.stderr).toContain('--token-file /nonexistent/token: no such file');
    const none = start([]);
    expect((await none.exited).code).toBe(2);
    expect(none.stderr).toContain('give the agent token in SIGNALGATE_AGENT_TOKEN or in a file named by --token-file');
  });
});
