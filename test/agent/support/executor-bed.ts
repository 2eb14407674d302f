import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { accountWithAgents, sourceFor } from '../../delivery/support/delivery-setup.js';
import { freePort } from '../../support/free-port.js';
import { startTestServer, type TestServer } from '../../support/start-test-server.js';
import { AgentProcess } from './agent-process.js';
import { QuickFixExecutor, QuoteBroker } from './fix-counterparties.js';

/** EURUSD as the executor's tests trade it: lots of 100,000, five digits. */
const INSTRUMENTS = {
  EURUSD: {
    brokerSymbol: 'EURUSD',
    digits: 5,
    contractSize: 100000,
    lotMin: 0.01,
    lotStep: 0.01,
    lotMax: 50,
    quoteCurrency: 'USD',
  },
};

export interface ExecutorBed {
  server: TestServer;
  dir: string;
  executor: QuickFixExecutor;
  /** The cTrader-style quote session pricing EURUSD at 1.1050/1.1052; null where quotes are asked of the executor. */
  quotes: QuoteBroker | null;
  agentId: string;
  authKey: string;
  /** Starts `signalgate agent --venue fix` on the bed's session file, the credentials in its environment. */
  startAgent(): AgentProcess;
  /** Stops the quote session, the executor and the server, and removes the directory (the agent is the caller's). */
  stop(): Promise<void>;
}

/**
 * A server, QuickFIX's executor as the trade session of `compId` (FIX 4.4, target EXECUTOR), with
 * `quotes` a quote session beside it, and an agent and a source on one account: what a test of
 * the FIX venue against the executor stands on.
 */
export async function startExecutorBed(options: {
  compId: string;
  credentials: { user: string; password: string };
  agentName: string;
  heartbeatSeconds: number;
  quotes: boolean;
  dirPrefix: string;
}): Promise<ExecutorBed> {
  const { compId, credentials } = options;
  const dir = mkdtempSync(path.join(tmpdir(), options.dirPrefix));
  let server: TestServer | null = null;
  let executor: QuickFixExecutor | null = null;
  let quotes: QuoteBroker | null = null;
  // Also what a failed start calls, so that a half-made bed leaves no process behind.
  const stop = async () => {
    quotes?.stop();
    await executor?.stop();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    server = await startTestServer();
    executor = await QuickFixExecutor.start(path.join(dir, 'executor'), compId);
    if (options.quotes) {
      quotes = new QuoteBroker(
        await freePort(),
        'cServer',
        compId,
        { EURUSD: { bid: 1.105, ask: 1.1052 } },
        credentials,
      );
      quotes.start();
      await quotes.ready();
    }
    const configFile = path.join(dir, 'fix.json');
    writeFileSync(
      configFile,
      JSON.stringify({
        dialect: 'fix44',
        trade: {
          host: '127.0.0.1',
          port: executor.port,
          tls: false,
          senderCompId: compId,
          targetCompId: 'EXECUTOR',
          heartbeatSeconds: options.heartbeatSeconds,
        },
        ...(quotes && {
          quote: {
            host: '127.0.0.1',
            port: quotes.port,
            tls: false,
            senderCompId: compId,
            targetCompId: 'cServer',
            senderSubId: 'QUOTE',
            targetSubId: 'QUOTE',
            heartbeatSeconds: 30,
            resetOnLogon: true,
          },
        }),
        account: { currency: 'USD', balance: 10000 },
        instruments: INSTRUMENTS,
      }),
    );
    const { accountId, agents } = await accountWithAgents(server, [options.agentName]);
    const authKey = (await sourceFor(server, accountId)).authKey;
    const running = server;
    return {
      server,
      dir,
      executor,
      quotes,
      agentId: agents[0]!.id,
      authKey,
      startAgent: () =>
        AgentProcess.startVenue(
          running.url,
          agents[0]!.token,
          path.join(dir, 'agent'),
          ['--venue', 'fix', '--fix-config', configFile],
          { SIGNALGATE_FIX_USERNAME: credentials.user, SIGNALGATE_FIX_PASSWORD: credentials.password },
        ),
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
