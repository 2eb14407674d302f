import { ccxt } from '../../src/agent/venues/ccxt/ccxt-library.js';
import { describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { VenueRefusedError, VenueUnreachableError } from '../../src/agent/venue.js';
import {
  expectSameRequest,
  fixture,
  paramsOf,
  recordedVenue,
  requestRecord,
  responseRecord,
} from './support/ccxt-records.js';

/**
 * The CCXT venue against Binance's recorded traffic (CCXT's static request and response
 * records): what our adapter makes CCXT send for each operation is what the record says the
 * exchange API takes for it, and the recorded answers map onto the agent's positions, orders
 * and outcomes.
 */
const markets = fixture('binance-markets.json');
const REQUESTS = 'binance-requests.json';
const RESPONSES = 'binance-responses.json';
const exchangeOptions = { leverageBrackets: {} };

/** Whatever answer: these tests look at the request. A NetworkError keeps CCXT from parsing. */
const noAnswer = () => {
  throw new ccxt.NetworkError('recorded request captured');
};

async function sentBy(
  market: 'spot' | 'swap',
  act: (venue: ReturnType<typeof recordedVenue>['venue']) => Promise<unknown>,
  positionMode: 'oneway' | 'hedge' = 'oneway',
) {
  const { venue, sent } = recordedVenue(
    { exchange: 'binance', market, positionMode, markets, exchangeOptions },
    noAnswer,
  );
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

describe('CCXT venue on Binance: the requests match the recorded ones', () => {
  const id = (step: string) => clientOrderId('sig-1', step);

  it('a market entry on a USDⓈ-M perpetual is "Swap market buy order", with our client order id', async () => {
    const sent = await sentBy('swap', (v) =>
      v.place({ clientId: id('o'), symbol: 'LTC/USDT:USDT', side: 'buy', kind: 'market', volume: 0.1, price: null }),
    );
    expectSameRequest(sent, requestRecord(REQUESTS, 'createOrder', 'Swap market buy order'), {
      key: 'newClientOrderId',
      value: id('o'),
    });
  });

  it('a pending limit entry is "Swap limit buy order"', async () => {
    const sent = await sentBy('swap', (v) =>
      v.place({ clientId: id('o'), symbol: 'LTC/USDT:USDT', side: 'buy', kind: 'limit', volume: 0.1, price: 55 }),
    );
    expectSameRequest(sent, requestRecord(REQUESTS, 'createOrder', 'Swap limit buy order'), {
      key: 'newClientOrderId',
      value: id('o'),
    });
  });

  it('a take-profit level of a short position is a reduce-only limit buy: "Swap limit buy with reduce only (closing short position)"', async () => {
    const sent = await sentBy('swap', (v) =>
      v.protect(position('LTC/USDT:USDT', 'sell', 0.2), {
        clientId: id('p1r0'),
        stop: null,
        targets: [{ price: 60, volume: 0.2 }],
        replaces: [],
      }),
    );
    expectSameRequest(
      sent,
      requestRecord(REQUESTS, 'createOrder', 'Swap limit buy with reduce only (closing short position)'),
      { key: 'newClientOrderId', value: `${id('p1r0')}t1` },
    );
  });

  it('closing part of a long in hedge mode is "swap hedged reduceOnly market sell order"', async () => {
    const sent = await sentBy('swap', (v) => v.close(position('BTC/USDT:USDT', 'buy', 0.05), 0.01, id('c1')), 'hedge');
    expectSameRequest(sent, requestRecord(REQUESTS, 'createOrder', 'swap hedged reduceOnly market sell order'), {
      key: 'newClientOrderId',
      value: id('c1'),
    });
  });

  it('a limit entry on a spot market is "Spot limit buy order"', async () => {
    const sent = await sentBy('spot', (v) =>
      v.place({ clientId: id('o'), symbol: 'LTC/USDT', side: 'buy', kind: 'limit', volume: 0.2, price: 50 }),
    );
    expectSameRequest(sent, requestRecord(REQUESTS, 'createOrder', 'Spot limit buy order'), {
      key: 'newClientOrderId',
      value: id('o'),
    });
  });

  it('cancelling a pending order is "Swap cancelOrder"; cancelling a held stop is "linear swap conditional cancelOrder"', async () => {
    const plain = await sentBy('swap', (v) => v.cancel({ id: '652509009', symbol: 'LTC/USDT:USDT' }));
    expectSameRequest(plain, requestRecord(REQUESTS, 'cancelOrder', 'Swap cancelOrder'), null);
    const stop = await sentBy('swap', (v) => v.cancel({ id: '3386', symbol: 'BTC/USDT:USDT', trigger: true }));
    expectSameRequest(stop, requestRecord(REQUESTS, 'cancelOrder', 'linear swap conditional cancelOrder'), null);
  });

  it('placing a client order id the exchange already has fetches that order instead: "fetch order with clientOrderId"', async () => {
    const existing = responseRecord(RESPONSES, 'fetchOpenOrder', 'swap open order') as Record<string, unknown>;
    const { venue, sent } = recordedVenue(
      { exchange: 'binance', market: 'swap', markets, exchangeOptions },
      (request) => {
        if (request.method === 'POST')
          throw new ccxt.DuplicateOrderId('binance {"code":-4116,"msg":"ClientOrderId is duplicated."}');
        return existing;
      },
    );
    const order = await venue.place({
      clientId: id('o'),
      symbol: 'LTC/USDT:USDT',
      side: 'buy',
      kind: 'limit',
      volume: 0.2,
      price: 50,
    });
    expect(order).toMatchObject({ id: '664082074', status: 'open', volume: 0.2, price: 50 });
    expect(sent).toHaveLength(2);
    const lookup = requestRecord(REQUESTS, 'fetchOrderWithClientOrderId', 'fetch order with clientOrderId');
    expectSameRequest(sent[1]!, lookup, { key: 'origClientOrderId', value: id('o') });
  });

  it('the stop loss is a stop-market conditional order like the recorded "Swap inverse market sell with stopLossPrice", made reduce-only on the linear endpoint', async () => {
    // CCXT's records hold this order type for an inverse perpetual only; the linear one differs
    // by endpoint family (fapi for dapi), symbol and our reduce-only flag.
    const sent = await sentBy('swap', (v) =>
      v.protect(position('LTC/USDT:USDT', 'buy', 1), { clientId: id('p1r0'), stop: 50, targets: [], replaces: [] }),
    );
    const { record, skipKeys } = requestRecord(REQUESTS, 'createOrder', 'Swap inverse market sell with stopLossPrice');
    expect(new URL(sent.url).pathname).toBe(new URL(record.url).pathname.replace('/dapi/', '/fapi/'));
    const skip = new Set([...skipKeys, 'clientAlgoId']);
    const clean = (p: Record<string, unknown>) =>
      Object.fromEntries(
        Object.entries(p)
          .filter(([k]) => !skip.has(k))
          .map(([k, v]) => [k, String(v)]),
      );
    const got = paramsOf(sent.url, sent.body, 'urlencoded');
    expect(clean(got)).toEqual({
      ...clean(paramsOf(record.url, record.output, 'urlencoded')),
      symbol: 'LTCUSDT',
      triggerPrice: '50',
      reduceOnly: 'true',
    });
    expect(got.clientAlgoId).toBe(`${id('p1r0')}s`);
  });
});

describe('CCXT venue on Binance: the recorded answers map onto the agent', () => {
  const answers = (routes: Record<string, unknown>) => (request: { url: string }) => {
    const path = new URL(request.url).pathname;
    if (!(path in routes)) throw new Error(`no recorded answer for ${path}`);
    const answer = routes[path];
    if (answer instanceof Error) throw answer;
    return answer;
  };

  it('the account: the USDT balance, the position the exchange holds, its open orders', async () => {
    const { venue } = recordedVenue(
      { exchange: 'binance', market: 'swap', markets, exchangeOptions },
      answers({
        '/fapi/v2/balance': responseRecord(RESPONSES, 'fetchBalance', 'Linear swap balance'),
        '/fapi/v2/account': responseRecord(RESPONSES, 'fetchBalance', 'Linear swap balance'),
        '/fapi/v3/account': responseRecord(RESPONSES, 'fetchBalance', 'Linear swap balance'),
        '/fapi/v3/positionRisk': responseRecord(RESPONSES, 'fetchPositions', 'Fetch linear positions without symbols'),
        '/fapi/v2/positionRisk': responseRecord(RESPONSES, 'fetchPositions', 'Fetch linear positions without symbols'),
        // The recorded order (CCXT's client id), and the same one as if this agent had placed it.
        '/fapi/v1/openOrders': [
          responseRecord(RESPONSES, 'fetchOpenOrder', 'swap open order'),
          {
            ...(responseRecord(RESPONSES, 'fetchOpenOrder', 'swap open order') as object),
            orderId: 664082075,
            clientOrderId: clientOrderId('sig-9', 'o'),
          },
        ],
        '/fapi/v1/openAlgoOrders': [],
      }),
    );
    const account = await venue.account();
    // The wallet balance, and the equity the exchange's margin balance (wallet plus unrealized
    // profit, counted once). The recorded account has no open profit; the recorded positions
    // come from another recording.
    expect(account).toMatchObject({ currency: 'USDT', balance: 31.022612 });
    expect(account.equity).toBeCloseTo(31.022612, 8);
    expect(account.positions).toEqual([
      { id: 'BTC/USDT:USDT:buy', symbol: 'BTC/USDT:USDT', side: 'buy', volume: 0.009, price: 67445.9, protection: [] },
    ]);
    // Only orders with the agent's own client ids count as its own, in the account as on start.
    expect(account.orders).toMatchObject([
      {
        id: '664082075',
        clientId: clientOrderId('sig-9', 'o'),
        symbol: 'LTC/USDT:USDT',
        side: 'buy',
        kind: 'limit',
        volume: 0.2,
        price: 50,
        status: 'open',
        filled: 0,
      },
    ]);
    expect((await venue.open()).orders.map((o) => o.id)).toEqual(['664082075']);
  });

  it('funds are read in the settlement currency of the signal’s market, not USDT only', async () => {
    // A USDC-settled perpetual beside the recorded USDT ones (the records hold none): BTC/USDT:USDT renamed.
    const usdt = (markets as Record<string, Record<string, unknown>>)['BTC/USDT:USDT']!;
    const withUsdc = {
      ...markets,
      'BTC/USDC:USDC': {
        ...usdt,
        id: 'BTCUSDC',
        symbol: 'BTC/USDC:USDC',
        quote: 'USDC',
        settle: 'USDC',
        quoteId: 'USDC',
        settleId: 'USDC',
      },
    };
    const { venue } = recordedVenue(
      { exchange: 'binance', market: 'swap', markets: withUsdc, exchangeOptions },
      answers({ '/fapi/v3/account': responseRecord(RESPONSES, 'fetchBalance', 'Linear swap balance') }),
    );
    expect(await venue.funds('BTC/USDT:USDT')).toEqual({ balance: 31.022612, equity: 31.022612, currency: 'USDT' });
    // The recorded account holds no USDC: none to size with, in USDC.
    expect(await venue.funds('BTC/USDC:USDC')).toEqual({ balance: 0, equity: 0, currency: 'USDC' });
  });

  it('the order book gives the quote: best bid and ask', async () => {
    const { venue } = recordedVenue(
      { exchange: 'binance', market: 'swap', markets, exchangeOptions },
      answers({ '/fapi/v1/depth': responseRecord(RESPONSES, 'fetchOrderBook', 'swap orderbook') }),
    );
    expect(await venue.quote('BTC/USDT:USDT')).toEqual({ bid: 42651.1, ask: 42878 });
  });

  it('a filled market order reports its id, lots and average price; a resting limit order its id and price', async () => {
    const filled = recordedVenue(
      { exchange: 'binance', market: 'swap', markets, exchangeOptions },
      () => (responseRecord(RESPONSES, 'fetchOrders', 'fetch portfolio margin orders') as unknown[])[0],
    );
    const market = await filled.venue.place({
      clientId: clientOrderId('sig-2', 'o'),
      symbol: 'BTC/USDT:USDT',
      side: 'buy',
      kind: 'market',
      volume: 0.01,
      price: null,
    });
    expect(market).toMatchObject({
      id: '262065925771',
      symbol: 'BTC/USDT:USDT',
      side: 'buy',
      kind: 'market',
      volume: 0.01,
      status: 'filled',
      filled: 0.01,
      average: 47279.4,
    });
    const resting = recordedVenue(
      { exchange: 'binance', market: 'swap', markets, exchangeOptions },
      () => (responseRecord(RESPONSES, 'createOrders', 'create swap orders') as unknown[])[0],
    );
    const limit = await resting.venue.place({
      clientId: clientOrderId('sig-3', 'o'),
      symbol: 'BTC/USDT:USDT',
      side: 'sell',
      kind: 'limit',
      volume: 0.2,
      price: 110001,
    });
    expect(limit).toMatchObject({
      id: '4087922044',
      side: 'sell',
      kind: 'limit',
      volume: 0.2,
      price: 110001,
      status: 'open',
      filled: 0,
      average: null,
    });
  });

  it("an exchange refusal becomes VenueRefusedError with the exchange's message; a network failure VenueUnreachableError", async () => {
    const refusing = recordedVenue({ exchange: 'binance', market: 'swap', markets, exchangeOptions }, () => {
      throw new ccxt.InsufficientFunds('binance {"code":-2019,"msg":"Margin is insufficient."}');
    });
    const refused = refusing.venue.place({
      clientId: clientOrderId('sig-4', 'o'),
      symbol: 'BTC/USDT:USDT',
      side: 'buy',
      kind: 'market',
      volume: 0.01,
      price: null,
    });
    await expect(refused).rejects.toBeInstanceOf(VenueRefusedError);
    await expect(refused).rejects.toThrow('Margin is insufficient.');
    const down = recordedVenue({ exchange: 'binance', market: 'swap', markets, exchangeOptions }, () => {
      throw new ccxt.RequestTimeout('binance GET https://fapi.binance.com/fapi/v1/depth request timed out (10000 ms)');
    });
    await expect(down.venue.quote('BTC/USDT:USDT')).rejects.toBeInstanceOf(VenueUnreachableError);
  });

  it('the instrument comes from the market: lot step and minimum, price digits, contract size, settle currency', () => {
    const { venue } = recordedVenue({ exchange: 'binance', market: 'swap', markets, exchangeOptions }, noAnswer);
    expect(venue.instrument('BTC/USDT:USDT')).toEqual({
      symbol: 'BTC/USDT:USDT',
      pipSize: 1,
      digits: 1,
      contractSize: 1,
      lotStep: 0.001,
      lotMin: 0.001,
      lotMax: 1000,
      quoteCurrency: 'USDT',
    });
    expect(venue.findSymbol('BTCUSDT')).toBe('BTC/USDT:USDT');
    const spot = recordedVenue({ exchange: 'binance', market: 'spot', markets, exchangeOptions }, noAnswer);
    expect(spot.venue.findSymbol('LTCUSDT')).toBe('LTC/USDT');
    expect(spot.venue.instrument('LTC/USDT')).toMatchObject({
      contractSize: 1,
      lotStep: 0.001,
      lotMin: 0.001,
      digits: 2,
      quoteCurrency: 'USDT',
    });
  });
});
