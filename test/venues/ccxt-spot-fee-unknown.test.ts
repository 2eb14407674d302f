import { afterEach, describe, expect, it } from 'vitest';
import { VenueUnreachableError } from '../../src/agent/venue.js';
import { CcxtVenue } from '../../src/agent/venues/ccxt/ccxt-venue.js';
import { BinanceSpotExchange } from '../fakes/binance-spot-exchange.js';

const KEYS = { apiKey: 'spot-key', secret: 'spot-secret' };

/**
 * The CCXT venue on the Binance spot test exchange at 0.1 %, its order answers without fills
 * (`newOrderRespType` RESULT, as CCXT sends when told): a market buy's fee, which Binance takes
 * from the coins bought, is read from the account's trades before the venue answers. When they
 * cannot be read, the buy is not answered as its 0.01 filled: the venue says it could not tell,
 * and the same order, placed again under its client id, is found and answered net of the fee.
 */
describe('the CCXT venue on Binance spot: a market buy whose fee must be read from its trades', () => {
  let exchange: BinanceSpotExchange;
  let venue: CcxtVenue;
  afterEach(async () => {
    await venue?.shutdown();
    await exchange?.stop();
  });

  const buy = {
    clientId: 'sgfee0o',
    symbol: 'BTC/USDT',
    side: 'buy',
    kind: 'market',
    volume: 0.01,
    price: null,
  } as const;

  it('its trades refused once: unreachable, then found by its client id with 0.00999 kept', async () => {
    exchange = await BinanceSpotExchange.start(KEYS);
    exchange.setFees(0.001);
    venue = new CcxtVenue({
      exchange: 'binance',
      market: 'spot',
      positionMode: 'oneway',
      sandbox: false,
      credentials: KEYS,
      proxyUrl: exchange.url,
      transport: null,
      exchangeOptions: { newOrderRespType: { market: 'RESULT', limit: 'RESULT' } },
    });
    await venue.open();
    await fetch(`${exchange.url}_control/fail?method=GET&path=/api/v3/myTrades&code=-1001&count=1`, {
      method: 'POST',
    });

    const refused = await venue.place(buy).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(VenueUnreachableError);
    expect((refused as Error).message).toMatch(/filled 0\.01 BTC\/USDT .* could not be read/);
    expect(exchange.requests('POST', '/api/v3/order').map((r) => r.params.newOrderRespType)).toEqual(['RESULT']);

    const found = await venue.place({ ...buy, mayExist: true });
    expect(found).toMatchObject({
      filled: 0.01,
      feeInCoin: { kept: 0.00999, fee: 0.00001, coin: 'BTC', dust: 0 },
    });
    // Found, not placed again.
    expect(exchange.requests('POST', '/api/v3/order')).toHaveLength(1);
    expect(exchange.state().balances.BTC).toEqual({ free: 0.00999, locked: 0 });
  });
});
