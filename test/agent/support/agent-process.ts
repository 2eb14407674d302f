import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';

const CLI = path.resolve('dist/cli/main.js');

export interface LogLine {
  level: number;
  msg: string;
  [field: string]: any;
}

/** `signalgate agent --paper` as a real process (built by `npm run build`), its JSON log collected. */
export class AgentProcess {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** The output as read, a piece per read: joined only when asked for (a long log joined at every read cost the benchmark's CPU). */
  private readonly outPieces: string[] = [];
  /** The last line read in part. */
  private partial = '';
  private err = '';
  private readonly parsed: LogLine[] = [];
  private readonly handledLines: LogLine[] = [];
  private watchers: Array<() => void> = [];

  private constructor(readonly child: ChildProcess) {
    child.stdout!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      this.outPieces.push(text);
      // Parsed as they come (complete lines only), so waiting on a long log stays cheap.
      const lines = (this.partial + text).split('\n');
      this.partial = lines.pop()!;
      for (const line of lines) {
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as LogLine;
        this.parsed.push(entry);
        if (entry.msg === 'signal handled') this.handledLines.push(entry);
      }
      this.wake();
    });
    child.stderr!.on('data', (chunk: Buffer) => (this.err += chunk.toString()));
    // On 'close', not 'exit': 'exit' may come before the last of its output has been read, and
    // tests read stdout and stderr once this resolves.
    this.exited = new Promise((resolve) =>
      child.on('close', (code, signal) => {
        this.wake();
        resolve({ code, signal });
      }),
    );
  }

  static start(server: string, token: string, dataDir: string, args: string[] = []): AgentProcess {
    return AgentProcess.startVenue(server, token, dataDir, ['--paper', ...args]);
  }

  /**
   * The agent on the venue `args` choose (`--venue fix --fix-config FILE`…), with `env` added to
   * its environment; `nodeArgs`: node's own flags (a benchmark's `--cpu-prof`).
   */
  static startVenue(
    server: string,
    token: string,
    dataDir: string,
    args: string[],
    env: Record<string, string> = {},
    nodeArgs: string[] = [],
  ): AgentProcess {
    // The token in the environment, as the docs advise: --token would add its warning to every log.
    const child = spawn(process.execPath, [...nodeArgs, CLI, 'agent', '--server', server, ...args], {
      env: {
        ...process.env,
        SIGNALGATE_DATA_DIR: dataDir,
        SIGNALGATE_LOG_LEVEL: 'info',
        SIGNALGATE_AGENT_TOKEN: token,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new AgentProcess(child);
  }

  /** `signalgate agent ARGS` exactly as given (the token, if any, among them), with `env` added to its environment. */
  static startExactly(args: string[], env: Record<string, string>): AgentProcess {
    const child = spawn(process.execPath, [CLI, 'agent', ...args], {
      env: { ...process.env, SIGNALGATE_LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    return new AgentProcess(child);
  }

  get stderr(): string {
    return this.err;
  }

  /** Everything the agent wrote to stdout (its log), JSON or not. */
  get stdout(): string {
    const whole = this.outPieces.join('');
    this.outPieces.splice(0, this.outPieces.length, whole);
    return whole;
  }

  lines(): LogLine[] {
    return this.parsed;
  }

  /** The signals the agent executed (or refused), in the order it handled them. */
  handled(): LogLine[] {
    return this.handledLines;
  }

  /** Waits for a log line that matches; fails with the log when the agent exits or `timeoutMs` passes. */
  waitForLog(match: (line: LogLine) => boolean, what: string, timeoutMs = 30_000): Promise<LogLine> {
    return this.waitUntil(() => this.parsed.find(match), what, timeoutMs);
  }

  /**
   * Waits until `count` signals were handled. A guard against a stall, not a deadline: it fails
   * once `timeoutMs` pass without one more signal handled, however long the whole run takes on
   * a loaded machine.
   */
  waitForHandled(count: number, timeoutMs = 60_000): Promise<LogLine> {
    let seen = this.handledLines.length;
    return this.waitUntil(
      () => this.handledLines[count - 1],
      `${count} signals handled`,
      timeoutMs,
      () => {
        const progressed = this.handledLines.length > seen;
        seen = this.handledLines.length;
        return progressed;
      },
    );
  }

  private async waitUntil(
    probe: () => LogLine | undefined,
    what: string,
    timeoutMs: number,
    progressed: () => boolean = () => false,
  ): Promise<LogLine> {
    let deadline = Date.now() + timeoutMs;
    while (true) {
      const found = probe();
      if (found) return found;
      if (progressed()) deadline = Date.now() + timeoutMs;
      const exited = this.child.exitCode !== null || this.child.signalCode !== null;
      if (exited || Date.now() > deadline) {
        throw new Error(
          `agent ${exited ? 'exited' : 'timed out'} before ${what}:\n${this.stdout.slice(-5000)}\n${this.err}`,
        );
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 200);
        this.watchers.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  connected(transport?: 'websocket' | 'long-poll'): Promise<LogLine> {
    return this.waitForLog(
      (l) => l.msg === 'connected' && (transport === undefined || l.transport === transport),
      `connected ${transport ?? ''}`,
    );
  }

  async stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGTERM');
    return this.exited;
  }

  async kill(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
    await this.exited;
  }

  private wake(): void {
    const watchers = this.watchers;
    this.watchers = [];
    for (const wake of watchers) wake();
  }
}
