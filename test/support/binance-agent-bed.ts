import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { AgentProcess } from '../agent/support/agent-process.js';
import { accountWithAgents, deliveriesOf, sourceFor, waitUntil } from '../delivery/support/delivery-setup.js';
import { BinanceUsdmExchange, type FakeSymbol } from '../fakes/binance-usdm-exchange.js';
import { startTestServer, type TestServer } from './start-test-server.js';

/** The API key and secret the Binance USDⓈ-M test exchange takes, in the agent's environment. */
export const BINANCE_KEYS = { SIGNALGATE_CCXT_API_KEY: 'usdm-key', SIGNALGATE_CCXT_SECRET: 'usdm-secret' };

/** One account's `signalgate agent --venue ccxt --exchange binanceusdm` on the test exchange. */
export interface BinanceAgent {
  /** The account's signal source key, for postSignal. */
  readonly authKey: string;
  readonly accountId: string;
  readonly agentId: string;
  /** Its data directory (the journal is under `agents/`). */
  readonly dir: string;
  /** The process started last. */
  readonly agent: AgentProcess;
  /** Starts the agent again on the same data directory and exchange, resolved once its venue is ready. */
  run(): Promise<AgentProcess>;
  /** The agent's published state (`GET /api/admin/agents/{id}`). */
  published(): Promise<any>;
}

export interface BinanceAgentBed {
  readonly server: TestServer;
  /** The exchange of the last `start` (a new one per test unless the bed is `lasting`). */
  readonly exchange: BinanceUsdmExchange;
  /** A new account with one agent and one source, a data directory, and its agent started on the exchange and ready. */
  start(name: string, options?: { args?: string[] }): Promise<BinanceAgent>;
  /** The signal's delivery once it has an outcome (executed, rejected or failed). */
  outcome(signal: string, timeoutMs?: number): Promise<any>;
  /** `POST /_control/{what}?{query}` at the exchange, which must answer 200. */
  control(what: string, query: string): Promise<void>;
  /** A data directory removed with the bed's other leftovers. */
  tempDir(prefix: string): string;
  /** `agent`, killed with the bed's other processes. */
  own(agent: AgentProcess): AgentProcess;
}

/**
 * The test bed of the CCXT agent tests (ccxt-binance-usdm-exchange, ccxt-held-data, symbol-lanes,
 * kill-points): one server for the `describe` block; per test (or, `lasting`, for the whole
 * block) the Binance USDⓈ-M test exchange in-process (`symbols`: its markets, else its default two), and real agent processes reaching it
 * through `--proxy-url`. What each test leaves (processes, exchange, data directories) is taken
 * down after it, or after the block when `lasting`.
 */
export function useBinanceAgentBed(options: { lasting?: boolean; symbols?: FakeSymbol[] } = {}): BinanceAgentBed {
  let server: TestServer | undefined;
  let exchange: BinanceUsdmExchange | undefined;
  const agents: AgentProcess[] = [];
  const dirs: string[] = [];

  const takeDown = async () => {
    for (const agent of agents.splice(0)) await agent.kill();
    exchange?.onMoment(null);
    await exchange?.stop();
    exchange = undefined;
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  };
  beforeAll(async () => {
    server = await startTestServer();
  });
  if (!options.lasting) afterEach(takeDown);
  afterAll(async () => {
    await takeDown();
    await server?.stop();
  });

  const bed: BinanceAgentBed = {
    get server() {
      if (!server) throw new Error('the test server starts in beforeAll; use it from a hook or test');
      return server;
    },
    get exchange() {
      if (!exchange) throw new Error('the exchange starts with the first start() of a test');
      return exchange;
    },
    async start(name, { args = [] } = {}) {
      const {
        accountId,
        agents: [made],
      } = await accountWithAgents(bed.server, [name]);
      const { authKey } = await sourceFor(bed.server, accountId);
      exchange ??= await BinanceUsdmExchange.start({
        apiKey: BINANCE_KEYS.SIGNALGATE_CCXT_API_KEY,
        secret: BINANCE_KEYS.SIGNALGATE_CCXT_SECRET,
        ...(options.symbols && { symbols: options.symbols }),
      });
      const fake = exchange;
      const dir = bed.tempDir('signalgate-usdm-');
      let last: AgentProcess;
      const run = async () => {
        last = bed.own(
          AgentProcess.startVenue(
            bed.server.url,
            made!.token,
            dir,
            ['--venue', 'ccxt', '--exchange', 'binanceusdm', '--proxy-url', fake.url, ...args],
            BINANCE_KEYS,
          ),
        );
        await last.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 90_000);
        return last;
      };
      await run();
      return {
        authKey,
        accountId,
        agentId: made!.id,
        dir,
        get agent() {
          return last;
        },
        run,
        published: async () => (await bed.server.admin('GET', `/api/admin/agents/${made!.id}`)).body.state,
      };
    },
    async outcome(signal, timeoutMs = 30_000) {
      await waitUntil(
        async () => ['executed', 'rejected', 'failed'].includes((await deliveriesOf(bed.server, signal))[0].status),
        `the outcome of ${signal}`,
        timeoutMs,
      );
      return (await deliveriesOf(bed.server, signal))[0];
    },
    async control(what, query) {
      const res = await fetch(`${bed.exchange.url}_control/${what}?${query}`, { method: 'POST' });
      expect(res.status).toBe(200);
    },
    tempDir(prefix) {
      const dir = mkdtempSync(path.join(tmpdir(), prefix));
      dirs.push(dir);
      return dir;
    },
    own(agent) {
      agents.push(agent);
      return agent;
    },
  };
  return bed;
}
