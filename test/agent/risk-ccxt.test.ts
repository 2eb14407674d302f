import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { NormalizedSignal } from '../../src/language/index.js';
import type { EffectiveRiskRules } from '../../src/risk/risk-rules.js';
import { waitUntil } from '../delivery/support/delivery-setup.js';
import { BinanceUsdmExchange } from '../fakes/binance-usdm-exchange.js';
import { AgentEndpoints } from './support/agent-endpoints.js';
import { AgentProcess } from './support/agent-process.js';

/**
 * A real `signalgate agent --venue ccxt --exchange binanceusdm` process against the Binance
 * USDⓈ-M test exchange, checking the risk rules its deliveries carry on the exchange's own
 * figures: positions netted one-way, the equity with the unrealized loss the exchange reports,
 * and a flatten that leaves the exchange flat.
 */
const KEYS = { SIGNALGATE_CCXT_API_KEY: 'usdm-key', SIGNALGATE_CCXT_SECRET: 'usdm-secret' };

describe('a CCXT agent checks the risk rules on the exchange’s figures', () => {
  let endpoints: AgentEndpoints | null = null;
  let exchange: BinanceUsdmExchange | null = null;
  let agent: AgentProcess | null = null;
  let dir = '';
  afterEach(async () => {
    await agent?.kill();
    await exchange?.stop();
    await endpoints?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
    [agent, exchange, endpoints, dir] = [null, null, null, ''];
  });

  async function start(): Promise<{ endpoints: AgentEndpoints; exchange: BinanceUsdmExchange }> {
    endpoints = await AgentEndpoints.start();
    exchange = await BinanceUsdmExchange.start({
      apiKey: KEYS.SIGNALGATE_CCXT_API_KEY,
      secret: KEYS.SIGNALGATE_CCXT_SECRET,
    });
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-risk-ccxt-'));
    agent = AgentProcess.startVenue(
      endpoints.url,
      'sga_risk',
      dir,
      ['--venue', 'ccxt', '--exchange', 'binanceusdm', '--proxy-url', exchange.url, '--transport', 'long-poll'],
      KEYS,
    );
    await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready');
    return { endpoints, exchange };
  }
  const rules = (over: Partial<EffectiveRiskRules>): EffectiveRiskRules => ({ tradingWindows: [], ...over });
  async function send(signal: NormalizedSignal, extra: Parameters<AgentEndpoints['deliver']>[1] = {}) {
    const id = endpoints!.deliver(signal, extra);
    await waitUntil(() => endpoints!.acks.has(id), `the ack of ${id}`, 30_000);
    return endpoints!.acks.get(id)!;
  }
  const buy = (lots: number, symbol = 'BTCUSDT', more: Partial<NormalizedSignal> = {}): NormalizedSignal => ({
    symbol,
    action: 'buy',
    volume: { type: 'lots', value: lots },
    ...more,
  });
  const state = () =>
    exchange!.state() as {
      positions: { symbol: string; amount: number }[];
      openOrders: unknown[];
      openAlgoOrders: unknown[];
    };

  it('position and order limits below, at and above, on the one-way position the exchange nets', async () => {
    await start();
    const risk = rules({ maxLotsPerOrder: 0.02, maxPositionLots: 0.03 });
    expect((await send(buy(0.01), { risk })).status).toBe('executed');
    expect((await send(buy(0.02), { risk })).status).toBe('executed');
    // 0.03 held: any more is above the position limit; the order was not sent.
    const orders = exchange!.requests('POST', '/fapi/v1/order').length;
    expect(await send(buy(0.001), { risk })).toMatchObject({
      status: 'rejected',
      result: { code: 'RISK_LIMIT', rule: 'maxPositionLots', limit: 0.03, value: 0.031 },
    });
    expect(await send(buy(0.021, 'ETHUSDT'), { risk })).toMatchObject({
      status: 'rejected',
      result: { rule: 'maxLotsPerOrder', value: 0.021 },
    });
    expect(exchange!.requests('POST', '/fapi/v1/order').length).toBe(orders);
    expect(state().positions).toEqual([expect.objectContaining({ symbol: 'BTCUSDT', amount: 0.03 })]);
    // Closing is never refused.
    expect(
      (await send({ symbol: 'BTCUSDT', action: 'closeall' }, { risk: rules({ maxLotsPerOrder: 0 }) })).status,
    ).toBe('executed');
  });

  it('the daily loss counts the unrealized loss the exchange reports, refuses entries and asks the server to halt', async () => {
    await start();
    const risk = rules({ maxDailyLoss: { amount: 150 } });
    expect((await send(buy(0.1), { risk })).status).toBe('executed');
    // 0.1 BTC from about 50,000 to 48,000: about 200 lost, unrealized, on a wallet of 10,000.
    const res = await fetch(`${exchange!.url}_control/price?symbol=BTCUSDT&price=48000`, { method: 'POST' });
    expect(res.status).toBe(200);
    // A server without halts answers 404: logged, and asked again.
    await agent!.waitForLog((l) => l.msg.startsWith('the server answered 404 to the halt'), 'the 404 logged', 40_000);
    expect(endpoints!.halts[0]).toMatchObject({ rule: 'maxDailyLoss', reason: expect.stringContaining('limit 150') });
    const refused = await send(buy(0.001), { risk });
    expect(refused).toMatchObject({ status: 'rejected', result: { code: 'RISK_LIMIT', rule: 'maxDailyLoss' } });
    expect(refused.result.value).toBeGreaterThanOrEqual(150);
    endpoints!.haltStatus = 200;
    await agent!.waitForLog((l) => l.msg === 'the server halted the account', 'the halt taken', 40_000);
    expect(endpoints!.halts.length).toBeGreaterThanOrEqual(2);
    // The agent closes nothing by itself.
    expect(state().positions).toEqual([expect.objectContaining({ symbol: 'BTCUSDT', amount: 0.1 })]);
  });

  it('a flatten leaves the exchange flat: two symbols, stops, and a pending entry', async () => {
    await start();
    expect((await send(buy(0.01, 'BTCUSDT', { sl: { type: 'price', value: 45_000 } }))).status).toBe('executed');
    expect((await send(buy(0.1, 'ETHUSDT'))).status).toBe('executed');
    const limit: NormalizedSignal = {
      symbol: 'ETHUSDT',
      action: 'buylimit',
      volume: { type: 'lots', value: 0.1 },
      entry: { type: 'price', value: 2500 },
    };
    expect((await send(limit)).status).toBe('executed');
    expect(state().openOrders.length + state().openAlgoOrders.length).toBeGreaterThanOrEqual(2);
    const flat = await send({ symbol: '*', action: 'positionflat' }, { flatten: { reason: 'halted by hand' } });
    expect(flat).toMatchObject({ status: 'executed', result: { remaining: { positions: [], orders: [] } } });
    expect(state().positions).toEqual([]);
    expect(state().openOrders).toEqual([]);
    expect(state().openAlgoOrders).toEqual([]);
  });
});
