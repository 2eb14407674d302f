import '../../../src/agent/venues/fix/jspurefix-prelude.js';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { gunzipSync } from 'node:zlib';
import { launchFixAcceptor } from '../../fakes/fix-acceptor.js';
import { freePort } from '../../support/free-port.js';

const EXECUTOR_GZ = '/usr/share/doc/libquickfix-doc/examples/executor/C++/.libs/executor.gz';

async function listening(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (true) {
    const ok = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on ${port} after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * QuickFIX's `executor` example (Debian's libquickfix-doc), an acceptor the QuickFIX authors
 * wrote: fills limit orders at their price, rejects market orders (session Reject) and cancels
 * (Business Message Reject). Sequence numbers kept in its FileStorePath (ResetOnLogon=N), so a
 * restart of either side resumes them.
 */
export class QuickFixExecutor {
  private child: ChildProcess | null = null;
  output = '';

  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  static async start(dir: string, agentCompId: string): Promise<QuickFixExecutor> {
    mkdirSync(path.join(dir, 'store'), { recursive: true });
    const binary = path.join(dir, 'executor');
    writeFileSync(binary, gunzipSync(readFileSync(EXECUTOR_GZ)), { mode: 0o755 });
    const port = await freePort();
    writeFileSync(
      path.join(dir, 'executor.cfg'),
      [
        '[DEFAULT]',
        'ConnectionType=acceptor',
        `SocketAcceptPort=${port}`,
        'SocketReuseAddress=Y',
        'StartTime=00:00:00',
        'EndTime=00:00:00',
        `FileStorePath=${path.join(dir, 'store')}`,
        'UseDataDictionary=N',
        'ResetOnLogon=N',
        '',
        '[SESSION]',
        'BeginString=FIX.4.4',
        'SenderCompID=EXECUTOR',
        `TargetCompID=${agentCompId}`,
        '',
      ].join('\n'),
    );
    const executor = new QuickFixExecutor(dir, port);
    await executor.run();
    return executor;
  }

  async run(): Promise<void> {
    const child = spawn(path.join(this.dir, 'executor'), [path.join(this.dir, 'executor.cfg')], {
      cwd: this.dir,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.child = child;
    await listening(this.port);
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;
  }
}

/**
 * A broker's quote session on jspurefix's acceptor side, following cTrader's FIX 4.4 rules:
 * the Logon must carry the username and password (553/554) and the QUOTE sub ids; a
 * MarketDataRequest (35=V) subscribing to a symbol is answered by a
 * MarketDataSnapshotFullRefresh (35=W) with the bid and offer; an unknown symbol by a
 * MarketDataRequestReject (35=Y).
 */
export class QuoteBroker {
  readonly logons: { user: string; password: string }[] = [];
  private launcher: { stop(): void } | null = null;

  constructor(
    readonly port: number,
    readonly compId: string,
    readonly agentCompId: string,
    readonly prices: Record<string, { bid: number; ask: number }>,
    private readonly credentials: { user: string; password: string },
  ) {}

  start(): void {
    const { prices, logons, credentials } = this;
    this.launcher = launchFixAcceptor(
      {
        name: 'broker-quote',
        port: this.port,
        dictionary: 'qf44',
        senderCompId: this.compId,
        targetCompId: this.agentCompId,
        subId: 'QUOTE',
      },
      {
        message: (session, msgType, message) => {
          if (msgType !== 'V') return;
          const request = message as {
            MDReqID: string;
            InstrmtMDReqGrp?: { NoRelatedSym?: { Instrument?: { Symbol?: string } }[] };
          };
          for (const related of request.InstrmtMDReqGrp?.NoRelatedSym ?? []) {
            const symbol = related.Instrument?.Symbol ?? '';
            const price = prices[symbol];
            if (!price) {
              session.push('Y', { MDReqID: request.MDReqID, MDReqRejReason: '0', Text: `unknown symbol ${symbol}` });
              continue;
            }
            session.push('W', {
              MDReqID: request.MDReqID,
              Instrument: { Symbol: symbol },
              MDFullGrp: {
                NoMDEntries: [
                  { MDEntryType: '0', MDEntryPx: price.bid },
                  { MDEntryType: '1', MDEntryPx: price.ask },
                ],
              },
            });
          }
        },
        logon: (user, password) => {
          logons.push({ user, password });
          return user === credentials.user && password === credentials.password;
        },
      },
    );
  }

  async ready(): Promise<void> {
    await listening(this.port, 20_000);
  }

  stop(): void {
    this.launcher?.stop();
  }
}
