import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { AgentProcess } from '../agent/support/agent-process.js';
import { accountWithAgents, deliveriesOf, sourceFor, waitUntil } from '../delivery/support/delivery-setup.js';
import { BinanceSpotExchange } from '../fakes/binance-spot-exchange.js';
import { BinanceUsdmExchange } from '../fakes/binance-usdm-exchange.js';
import { BybitV5Exchange } from '../fakes/bybit-v5-exchange.js';
import { startTestServer, type TestServer } from './start-test-server.js';

/** The API key and secret the Binance USDⓈ-M test exchange takes, in the agent's environment. */
export const BINANCE_KEYS = { SIGNALGATE_CCXT_API_KEY: 'usdm-key', SIGNALGATE_CCXT_SECRET: 'usdm-secret' };

/** A test exchange in-process, as the bed starts it for CCXT's exchange `id` and stops it. */
export interface CcxtTestVenue<E extends { readonly url: string; stop(): Promise<void> }> {
  /** CCXT's id of the exchange (`--exchange`). */
  readonly id: string;
  /** The API key and secret in the agent's environment, which the exchange takes. */
  readonly keys: { SIGNALGATE_CCXT_API_KEY: string; SIGNALGATE_CCXT_SECRET: string };
  /** How the data directories of its agents are named. */
  readonly dirPrefix: string;
  start(keys: { apiKey: string; secret: string }): Promise<E>;
}

export const BINANCE_USDM: CcxtTestVenue<BinanceUsdmExchange> = {
  id: 'binanceusdm',
  keys: BINANCE_KEYS,
  dirPrefix: 'signalgate-usdm-',
  start: (keys) => BinanceUsdmExchange.start(keys),
};

/** Binance spot (`--exchange binance`; its agents are started with `--market spot`). */
export const BINANCE_SPOT: CcxtTestVenue<BinanceSpotExchange> = {
  id: 'binance',
  keys: { SIGNALGATE_CCXT_API_KEY: 'spot-key', SIGNALGATE_CCXT_SECRET: 'spot-secret' },
  dirPrefix: 'signalgate-spot-',
  start: (keys) => BinanceSpotExchange.start(keys),
};

export const BYBIT: CcxtTestVenue<BybitV5Exchange> = {
  id: 'bybit',
  keys: { SIGNALGATE_CCXT_API_KEY: 'bybit-key', SIGNALGATE_CCXT_SECRET: 'bybit-secret' },
  dirPrefix: 'signalgate-bybit-',
  start: (keys) => BybitV5Exchange.start(keys),
};

/** One account's `signalgate agent --venue ccxt --exchange ID` on the test exchange. */
export interface CcxtAgent {
  /** The account's signal source key, for postSignal. */
  readonly authKey: string;
  /** The account's signal source, as the ledger's statistics name it. */
  readonly sourceId: string;
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

export interface CcxtAgentBed<E> {
  readonly server: TestServer;
  /** The exchange of the last `start` (a new one per test unless the bed is `lasting`). */
  readonly exchange: E;
  /** A new account with one agent and one source, a data directory, and its agent started on the exchange and ready. */
  start(name: string, options?: { args?: string[] }): Promise<CcxtAgent>;
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
 * The test bed of the CCXT agent tests (ccxt-binance-usdm-exchange, ccxt-bybit, ccxt-held-data,
 * symbol-lanes, kill-points…): one server for the `describe` block; per test (or, `lasting`, for
 * the whole block) the venue's test exchange in-process, and real agent processes reaching it
 * through `--proxy-url`. What each test leaves (processes, exchange, data directories) is taken
 * down after it, or after the block when `lasting`.
 */
export function useCcxtAgentBed<E extends { readonly url: string; stop(): Promise<void> }>(
  venue: CcxtTestVenue<E>,
  options: { lasting?: boolean } = {},
): CcxtAgentBed<E> {
  let server: TestServer | undefined;
  let exchange: E | undefined;
  const agents: AgentProcess[] = [];
  const dirs: string[] = [];

  const takeDown = async () => {
    for (const agent of agents.splice(0)) await agent.kill();
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

  const bed: CcxtAgentBed<E> = {
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
      const { authKey, id: sourceId } = await sourceFor(bed.server, accountId);
      exchange ??= await venue.start({
        apiKey: venue.keys.SIGNALGATE_CCXT_API_KEY,
        secret: venue.keys.SIGNALGATE_CCXT_SECRET,
      });
      const fake = exchange;
      const dir = bed.tempDir(venue.dirPrefix);
      let last: AgentProcess;
      const run = async () => {
        last = bed.own(
          AgentProcess.startVenue(
            bed.server.url,
            made!.token,
            dir,
            ['--venue', 'ccxt', '--exchange', venue.id, '--proxy-url', fake.url, ...args],
            venue.keys,
          ),
        );
        await last.waitForLog((l) => l.msg === 'venue ready', 'the venue ready', 90_000);
        return last;
      };
      await run();
      return {
        authKey,
        sourceId,
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
