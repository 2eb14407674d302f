import { ccxt } from '../../src/agent/venues/ccxt/ccxt-library.js';
import { afterEach, describe, expect, it } from 'vitest';
import { BinanceUsdmExchange } from '../fakes/binance-usdm-exchange.js';

/** The stateful test exchange itself, driven by CCXT's binanceusdm as the agent drives it (through proxyUrl). */
const KEYS = { apiKey: 'fake-key', secret: 'fake-secret' };

describe('the Binance USDⓈ-M test exchange', () => {
  let exchange: BinanceUsdmExchange;
  afterEach(async () => {
    await exchange?.stop();
  });

  async function client(keys = KEYS) {
    exchange = await BinanceUsdmExchange.start(KEYS);
    const binance = new ccxt.binanceusdm({ ...keys, options: { fetchCurrencies: false, fetchMargins: false } });
    binance.proxyUrl = exchange.url;
    await binance.loadMarkets();
    return binance;
  }

  it('refuses a wrong secret (-1022), fills a market order at the book and keeps conditional orders apart', async () => {
    const binance = await client();
    const wrong = new ccxt.binanceusdm({ apiKey: KEYS.apiKey, secret: 'other', options: { fetchCurrencies: false } });
    wrong.proxyUrl = exchange.url;
    wrong.markets = binance.markets;
    await expect(wrong.fetchBalance()).rejects.toThrow(/-1022/);

    const entry = await binance.createOrder('BTC/USDT:USDT', 'market', 'buy', 0.01, undefined, { clientOrderId: 'e1' });
    expect(entry).toMatchObject({ status: 'closed', filled: 0.01, average: 50000.1 });
    const stop = await binance.createOrder('BTC/USDT:USDT', 'market', 'sell', 0.01, undefined, {
      stopLossPrice: 49000,
      reduceOnly: true,
      clientOrderId: 'e1s',
    });
    await binance.createOrder('BTC/USDT:USDT', 'limit', 'sell', 0.01, 51000, {
      reduceOnly: true,
      clientOrderId: 'e1t',
    });
    // Unique among open orders, algo orders included.
    await expect(
      binance.createOrder('BTC/USDT:USDT', 'limit', 'sell', 0.01, 51000, { reduceOnly: true, clientOrderId: 'e1s' }),
    ).rejects.toThrow(/-4116/);
    expect((await binance.fetchOpenOrders('BTC/USDT:USDT')).map((o) => o.clientOrderId)).toEqual(['e1t']);
    expect(
      (await binance.fetchOpenOrders('BTC/USDT:USDT', undefined, undefined, { trigger: true })).map(
        (o) => o.clientOrderId,
      ),
    ).toEqual(['e1s']);
    // Would trigger at once: -2021.
    await expect(
      binance.createOrder('BTC/USDT:USDT', 'market', 'sell', 0.01, undefined, {
        stopLossPrice: 50500,
        reduceOnly: true,
      }),
    ).rejects.toThrow(/-2021/);

    // The stop triggers, the position closes, the target (reduce-only) expires.
    exchange.setPrice('BTCUSDT', 48900);
    const triggered = await binance.fetchOrder(String(stop.id), 'BTC/USDT:USDT', { trigger: true });
    expect(triggered.status).toBe('closed');
    const actual = await binance.fetchOrder(String(triggered.info.actualOrderId), 'BTC/USDT:USDT');
    expect(actual).toMatchObject({ status: 'closed', filled: 0.01, average: 48900 });
    expect(await binance.fetchOpenOrders('BTC/USDT:USDT')).toEqual([]);
    expect(exchange.state()).toMatchObject({ positions: [], wallet: 10_000 + 0.01 * (48900 - 50000.1) });
    // Nothing to reduce: -2022; too much margin: -2019.
    await expect(
      binance.createOrder('BTC/USDT:USDT', 'market', 'sell', 0.01, undefined, { reduceOnly: true }),
    ).rejects.toThrow(/-2022/);
    await expect(binance.createOrder('BTC/USDT:USDT', 'market', 'buy', 5, undefined)).rejects.toThrow(/-2019/);
  });
});
