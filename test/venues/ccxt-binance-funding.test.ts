import { afterEach, describe, expect, it } from 'vitest';
import { CcxtVenue } from '../../src/agent/venues/ccxt/ccxt-venue.js';
import { BinanceUsdmExchange } from '../fakes/binance-usdm-exchange.js';

const KEYS = { apiKey: 'funding-key', secret: 'funding-secret' };

/**
 * The CCXT venue's funding payments against the Binance USDⓈ-M test exchange (its income history
 * answers at most `limit` records of a period, oldest first, from `startTime` on): a read from a
 * time takes every payment since, page after page, each once, keyed by tranId, market and time.
 */
describe("the CCXT venue's funding payments on Binance USDⓈ-M", () => {
  let exchange: BinanceUsdmExchange;
  let venue: CcxtVenue;
  afterEach(async () => {
    await venue?.shutdown();
    await exchange?.stop();
  });

  it('reads 1,200 payments in two pages from a time, and only those from a later one', async () => {
    exchange = await BinanceUsdmExchange.start(KEYS);
    venue = new CcxtVenue({
      exchange: 'binanceusdm',
      market: 'swap',
      positionMode: 'oneway',
      sandbox: false,
      credentials: KEYS,
      proxyUrl: exchange.url,
      transport: null,
    });
    await venue.open();
    await venue.place({
      clientId: 'sgfunding0o',
      symbol: 'BTC/USDT:USDT',
      side: 'buy',
      kind: 'market',
      volume: 0.01,
      price: null,
    });
    // One a second from a fixed time: a long of 0.01 at 50000, rate 0.01 %: 0.05 USDT paid each.
    const base = Date.parse('2026-11-01T00:00:00Z');
    for (let i = 0; i < 1200; i += 1) exchange.applyFunding('BTCUSDT', 0.0001, base + i * 1000);

    const all = await venue.funding(base);
    expect(all).toHaveLength(1200);
    expect(new Set(all.map((p) => p.venueFundingId)).size).toBe(1200);
    expect(all[0]).toEqual({
      venueFundingId: `${exchange.income[0]!.tranId}:BTCUSDT:${base}`,
      symbol: 'BTC/USDT:USDT',
      amount: -0.05,
      currency: 'USDT',
      at: '2026-11-01T00:00:00.000Z',
    });
    expect(all.at(-1)!.at).toBe(new Date(base + 1199 * 1000).toISOString());
    // The second page starts at the first's last time (inclusive), which is not taken twice.
    const reads = exchange.requests('GET', '/fapi/v1/income');
    expect(reads.map((r) => [r.params.incomeType, r.params.limit, Number(r.params.startTime)])).toEqual([
      ['FUNDING_FEE', '1000', base],
      ['FUNDING_FEE', '1000', base + 999 * 1000],
    ]);

    expect(await venue.funding(base + 1150 * 1000)).toHaveLength(50);
    expect(await venue.funding(base + 1200 * 1000)).toEqual([]);
  });
});
