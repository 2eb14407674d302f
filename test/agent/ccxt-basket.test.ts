import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import { BASKET_SYMBOLS, BinanceUsdmExchange } from '../fakes/binance-usdm-exchange.js';
import { BINANCE_USDM, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';

/**
 * A basket at the candle close (issue 51): one account's signals for 20 symbols posted at once
 * to a real CCXT agent on the Binance USDⓈ-M test exchange. Every order goes out together: none
 * waits for another symbol's whole signal (its order, then the read of its fills and fees).
 */
const ORDER = '/fapi/v1/order';
const TRADES = '/fapi/v1/userTrades';
const ACCOUNT = '/fapi/v3/account';

describe('a CCXT basket of 20 symbols', () => {
  const bed = useCcxtAgentBed({
    ...BINANCE_USDM,
    start: (keys) => BinanceUsdmExchange.start({ ...keys, symbols: BASKET_SYMBOLS }),
  });

  it("reaches the exchange as 20 orders while every symbol's read after its order is held", async () => {
    const source = await bed.start('basket-20');
    // Each market order's fills are read after it: the exchange answers those reads 10 s late,
    // so a symbol that waited for another's whole signal would send its order only after that.
    await bed.control('hold', `method=GET&path=${TRADES}&seconds=10&count=40`);
    const posted = Date.now();
    const signals = await Promise.all(
      BASKET_SYMBOLS.map((s) => postSignal(bed.server.url, source.authKey, `${s.symbol},buy,vol=0.1`)),
    );
    await waitUntil(() => bed.exchange.requests('POST', ORDER).length === 20, 'the 20 orders at the exchange', 9000);
    const orders = bed.exchange.requests('POST', ORDER);
    expect(new Set(orders.map((o) => o.params.symbol))).toEqual(new Set(BASKET_SYMBOLS.map((s) => s.symbol)));
    expect(Math.max(...orders.map((o) => o.at)) - posted).toBeLessThan(9000);
    for (const signal of signals) expect((await bed.outcome(signal, 60_000)).status).toBe('executed');
  }, 90_000);
  it("an opening's fill does not hold another symbol's decision until the account is read again", async () => {
    const source = await bed.start('basket-after-opening');
    // The account read that follows BTCUSDT's fill is answered 6 s late.
    await bed.control('hold', `method=GET&path=${ACCOUNT}&seconds=6&count=1`);
    const first = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.1');
    await waitUntil(() => bed.exchange.requests('POST', ORDER).length === 1, 'the BTCUSDT order', 9000);
    const btc = bed.exchange.requests('POST', ORDER)[0]!;
    await waitUntil(
      () => bed.exchange.requests('GET', ACCOUNT).some((r) => r.at > btc.at),
      'the account read after the fill',
      9000,
    );
    const t0 = Date.now();
    const second = await postSignal(bed.server.url, source.authKey, 'ETHUSDT,buy,vol_pctbal_loss=1,sl_price=90');
    await waitUntil(() => bed.exchange.requests('POST', ORDER).length === 2, 'the ETHUSDT order', 20_000);
    // Its order goes with the funds held: the fill changed the wallet by its fee only.
    expect(bed.exchange.requests('POST', ORDER)[1]!.at - t0).toBeLessThan(3000);
    for (const signal of [first, second]) expect((await bed.outcome(signal, 60_000)).status).toBe('executed');
  }, 90_000);
});
