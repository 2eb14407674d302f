import { ccxt } from '../../src/agent/venues/ccxt/ccxt-library.js';
import { describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { VenueUnreachableError } from '../../src/agent/venue.js';
import { expectSameRequest, fixture, paramsOf, recordedVenue, requestRecord } from './support/ccxt-records.js';

/** The CCXT venue against Bybit's recorded requests (CCXT's static records): linear perpetuals and spot. */
const markets = fixture('bybit-markets.json');
const REQUESTS = 'bybit-requests.json';
// What CCXT's own recorded-request tests set, so that CCXT does not ask the account's type first.
const exchangeOptions = { enableUnifiedAccount: true, enableUnifiedMargin: false };

async function sentBy(
  market: 'spot' | 'swap',
  act: (venue: ReturnType<typeof recordedVenue>['venue']) => Promise<unknown>,
) {
  const { venue, sent } = recordedVenue({ exchange: 'bybit', market, markets, exchangeOptions }, () => {
    throw new ccxt.NetworkError('recorded request captured');
  });
  await expect(act(venue)).rejects.toBeInstanceOf(VenueUnreachableError);
  expect(sent).toHaveLength(1);
  return sent[0]!;
}

const position = (symbol: string, side: 'buy' | 'sell', volume: number) => ({
  id: `${symbol}:${side}`,
  symbol,
  side,
  volume,
  price: 0,
  protection: [],
});
const id = (step: string) => clientOrderId('sig-1', step);

describe('CCXT venue on Bybit: the requests match the recorded ones', () => {
  it('a pending limit entry on a linear perpetual is "Swap limit order", with our client order id as orderLinkId', async () => {
    const sent = await sentBy('swap', (v) =>
      v.place({ clientId: id('o'), symbol: 'ADA/USDT:USDT', side: 'buy', kind: 'limit', volume: 50, price: 0.1 }),
    );
    expectSameRequest(sent, requestRecord(REQUESTS, 'createOrder', 'Swap limit order'), {
      key: 'orderLinkId',
      value: id('o'),
    });
  });

  it('a limit entry on a spot market is "Spot limit order"', async () => {
    const sent = await sentBy('spot', (v) =>
      v.place({ clientId: id('o'), symbol: 'ADA/USDT', side: 'buy', kind: 'limit', volume: 50, price: 0.1 }),
    );
    expectSameRequest(sent, requestRecord(REQUESTS, 'createOrder', 'Spot limit order'), {
      key: 'orderLinkId',
      value: id('o'),
    });
  });

  it('a take-profit level of a long is the reduce-only limit sell of "Swap limit sell with reduceOnly and postOnly", without post-only', async () => {
    // A target must fill when the price gets there, so it is not post-only (which the exchange
    // would cancel instead of filling when it crosses).
    const sent = await sentBy('swap', (v) =>
      v.protect(position('LTC/USDT:USDT', 'buy', 0.1), {
        clientId: id('p1r0'),
        stop: null,
        targets: [{ price: 100, volume: 0.1 }],
        replaces: [],
      }),
    );
    const { record } = requestRecord(REQUESTS, 'createOrder', 'Swap limit sell with reduceOnly and postOnly');
    expect(new URL(sent.url).pathname).toBe(new URL(record.url).pathname);
    const { timeInForce: _postOnly, ...recorded } = paramsOf(record.url, record.output, 'json');
    const { orderLinkId, ...got } = paramsOf(sent.url, sent.body, 'json');
    expect(got).toEqual(recorded);
    expect(orderLinkId).toBe(`${id('p1r0')}t1`);
  });

  it('closing a long on a linear perpetual is the reduce-only market sell of "Swap inverse market sell order", in the linear category', async () => {
    const sent = await sentBy('swap', (v) => v.close(position('LTC/USDT:USDT', 'buy', 1), 1, id('c1')));
    const { record } = requestRecord(REQUESTS, 'createOrder', 'Swap inverse market sell order');
    expect(new URL(sent.url).pathname).toBe(new URL(record.url).pathname);
    const { orderLinkId, ...got } = paramsOf(sent.url, sent.body, 'json');
    expect(got).toEqual({ ...paramsOf(record.url, record.output, 'json'), symbol: 'LTCUSDT', category: 'linear' });
    expect(orderLinkId).toBe(id('c1'));
  });
});
