import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { BinanceUsdmExchange } from '../fakes/binance-usdm-exchange.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import { AgentProcess } from './support/agent-process.js';

const KEYS = { SIGNALGATE_CCXT_API_KEY: 'usdm-key', SIGNALGATE_CCXT_SECRET: 'usdm-secret' };

/**
 * A real agent process on the Binance USDⓈ-M test exchange charging Binance's VIP 0 commission
 * (taker 0.05 % of the notional, in USDT): the ledger's trade carries the exchange's fees, read
 * from its account trade list, and the profit net of them.
 */
describe('the ledger of an agent on the Binance USDⓈ-M test exchange with fees', () => {
  let server: TestServer;
  let exchange: BinanceUsdmExchange;
  let dir: string;
  const agents: AgentProcess[] = [];
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.kill();
    await exchange?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  const outcome = async (signal: string) => {
    await waitUntil(
      async () => ['executed', 'rejected', 'failed'].includes((await deliveriesOf(server, signal))[0].status),
      `the outcome of ${signal}`,
      30_000,
    );
    return (await deliveriesOf(server, signal))[0];
  };

  it('a long opened and closed at the market: fees and realized profit as computed by hand', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['usdm-ledger']);
    const source = await sourceFor(server, accountId);
    exchange = await BinanceUsdmExchange.start({
      apiKey: KEYS.SIGNALGATE_CCXT_API_KEY,
      secret: KEYS.SIGNALGATE_CCXT_SECRET,
    });
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-usdm-ledger-'));
    const control = async (what: string, query: string) => {
      const res = await fetch(`${exchange.url}_control/${what}?${query}`, { method: 'POST' });
      expect(res.status).toBe(200);
    };
    await control('fees', 'maker=0.0002&taker=0.0005');
    const agent = AgentProcess.startVenue(
      server.url,
      testAgent!.token,
      dir,
      ['--venue', 'ccxt', '--exchange', 'binanceusdm', '--proxy-url', exchange.url],
      KEYS,
    );
    agents.push(agent);
    await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready');

    const entry = await postSignal(server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,comment=fees');
    expect(await outcome(entry)).toMatchObject({ status: 'executed' });
    await control('price', 'symbol=BTCUSDT&price=51000');
    const exit = await postSignal(server.url, source.authKey, 'BTCUSDT,closebuy');
    expect(await outcome(exit)).toMatchObject({ status: 'executed' });

    const closed = async () =>
      ((await server.admin('GET', `/api/admin/ledger/trades?accountId=${accountId}`)).body.trades as any[]).filter(
        (t) => t.exitAt !== null,
      );
    await waitUntil(async () => (await closed()).length === 1, 'the closed trade in the ledger', 30_000);
    const [trade] = await closed();
    // Bought 0.01 at the ask 50000.1: fee 50000.1 × 0.01 × 0.0005 = 0.2500005 USDT.
    // Sold 0.01 at the bid 51000: fee 51000 × 0.01 × 0.0005 = 0.255 USDT.
    // Profit (51000 − 50000.1) × 0.01 = 9.999, booked by the engine to the cent: 10.00; less
    // the fees 0.5050005: 9.4949995 USDT.
    expect(trade).toMatchObject({
      symbol: 'BTC/USDT:USDT',
      side: 'long',
      lots: 0.01,
      entryPrice: 50000.1,
      exitPrice: 51000,
      fees: 0.5050005,
      realizedProfit: 9.4949995,
      openingSignalId: entry,
      closingSignalIds: [exit],
      strategy: 'fees',
    });
  });
});
