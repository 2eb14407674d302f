import { ccxt } from '../../src/agent/venues/ccxt/ccxt-library.js';
import { describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { emptyLinks, type VenueBook } from '../../src/agent/venue-book.js';
import { carryOutTick, executeSignal } from '../../src/agent/venue-execution.js';
import { applyTick, createSymbolMap, type EngineState } from '../../src/engine/index.js';
import { parseSignal } from '../../src/language/index.js';
import {
  fixture,
  paramsOf,
  recordedVenue,
  requestRecord,
  responseRecord,
  type SentRequest,
} from './support/ccxt-records.js';

/**
 * Breakeven and trailing on Bybit linear perpetuals: the engine decides at the quotes the venue
 * reads, and the CCXT venue moves the stop Bybit holds (the new reduce-only conditional order
 * first, then the old one cancelled, once). Quotes: CCXT's recorded Bybit "swap orderbook"
 * (BTCUSDT, bid 42544.7, ask 42548) with `shift` added to its prices; only the numbers change.
 * Order answers: CCXT's recorded answer of Bybit's order-create endpoint ({orderId,
 * orderLinkId}), its ids replaced by the order's own; Bybit's cancel endpoint answers in the same
 * form. The order look-up (/v5/order/realtime, which CCXT's records lack) answers in the form of
 * Bybit's documentation: a market order filled at `fillAt`, any other order untriggered. The
 * requests are compared with CCXT's recorded Bybit requests.
 */
const markets = fixture('bybit-markets.json');
const REQUESTS = 'bybit-requests.json';
const RESPONSES = 'bybit-responses.json';
const SYMBOL = 'BTC/USDT:USDT';
/** As CCXT's own recorded-traffic tests set them: a unified account (the check of the account kind is not among the records). */
const exchangeOptions = { enableUnifiedAccount: true, enableUnifiedMargin: false };

class RecordedBybit {
  shift = 0;
  /** Where the exchange fills market orders (its own price, which the agent reads back). */
  fillAt = '42548';
  /** Exchange order id → what was placed. */
  readonly placed = new Map<string, Record<string, string>>();
  readonly open = new Map<string, string>();
  readonly cancelled: string[] = [];
  /** Client order id → exchange order id, of every order placed. */
  readonly ids = new Map<string, string>();
  private next = 1971981115648733696n;

  answer = (request: SentRequest): unknown => {
    const path = new URL(request.url).pathname;
    const params = paramsOf(request.url, request.body, 'json') as Record<string, string>;
    const created = responseRecord(
      RESPONSES,
      'createMarketBuyOrderWithCost',
      'order with cost, using a decimal amount',
    ) as { result: Record<string, string> };
    if (request.method === 'GET' && path === '/v5/market/orderbook') {
      const book = responseRecord(RESPONSES, 'fetchOrderBook', 'swap orderbook') as {
        result: { b: string[][]; a: string[][] };
      };
      const move = (levels: string[][]) =>
        levels.map(([price, size]) => [String(Math.round((Number(price) + this.shift) * 10) / 10), size]);
      return { ...book, result: { ...book.result, b: move(book.result.b), a: move(book.result.a) } };
    }
    if (request.method === 'POST' && path === '/v5/order/create') {
      const orderId = String(this.next++);
      this.ids.set(params.orderLinkId!, orderId);
      this.placed.set(orderId, params);
      if (params.triggerPrice !== undefined) this.open.set(orderId, params.orderLinkId!);
      return { ...created, result: { orderId, orderLinkId: params.orderLinkId } };
    }
    if (request.method === 'POST' && path === '/v5/order/cancel') {
      const link = this.open.get(params.orderId!);
      if (link === undefined)
        throw new ccxt.OrderNotFound('bybit {"retCode":110001,"retMsg":"order not exists or too late to cancel"}');
      this.open.delete(params.orderId!);
      this.cancelled.push(params.orderId!);
      return { ...created, result: { orderId: params.orderId, orderLinkId: link } };
    }
    if (request.method === 'GET' && path === '/v5/order/realtime') {
      const orderId = new URL(request.url).searchParams.get('orderId')!;
      const p = this.placed.get(orderId);
      if (p === undefined)
        return {
          retCode: 0,
          retMsg: 'OK',
          result: { category: 'linear', list: [], nextPageCursor: '' },
          retExtInfo: {},
          time: Date.now(),
        };
      const market = p.orderType === 'Market' && p.triggerPrice === undefined;
      const order = {
        orderId,
        orderLinkId: p.orderLinkId,
        symbol: p.symbol,
        side: p.side,
        orderType: p.orderType,
        price: p.price ?? '0',
        qty: p.qty,
        avgPrice: market ? this.fillAt : '',
        cumExecQty: market ? p.qty : '0',
        cumExecValue: market ? String(Number(p.qty) * Number(this.fillAt)) : '0',
        cumExecFee: '0',
        orderStatus: market ? 'Filled' : this.open.has(orderId) ? 'Untriggered' : 'Cancelled',
        timeInForce: market ? 'IOC' : 'GTC',
        triggerPrice: p.triggerPrice ?? '',
        reduceOnly: p.reduceOnly === 'true' || (p.reduceOnly as unknown) === true,
        createdTime: String(Date.now()),
        updatedTime: String(Date.now()),
        positionIdx: 0,
      };
      return {
        retCode: 0,
        retMsg: 'OK',
        result: { category: 'linear', list: [order], nextPageCursor: '' },
        retExtInfo: {},
        time: Date.now(),
      };
    }
    throw new ccxt.BadRequest(`no recorded answer for ${request.method} ${path}`);
  };
}

function bookOn(venue: ReturnType<typeof recordedVenue>['venue'], quote: { bid: number; ask: number }): VenueBook {
  const { symbol: _name, ...spec } = venue.instrument(SYMBOL)!;
  const state: EngineState = {
    config: {
      currency: 'USDT',
      instruments: { BTCUSDT: spec },
      symbolMap: createSymbolMap({ BTCUSDT: SYMBOL }),
      defaultVolumeLots: null,
    },
    balance: 10_000,
    quotes: { [SYMBOL]: quote },
    positions: [],
    orders: [],
    nextTicket: 1,
  };
  return emptyLinks(state);
}

/** What the venue sent for the stops: creates with a trigger price, and cancels. */
const stopRequests = (sent: SentRequest[]) =>
  sent.filter((r) => {
    const path = new URL(r.url).pathname;
    return (
      path === '/v5/order/cancel' ||
      (path === '/v5/order/create' && 'triggerPrice' in (paramsOf(r.url, r.body, 'json') as object))
    );
  });

/** Recorded parameters without the ones that are the order's own (prices, ids, sizes). */
const without = (params: Record<string, unknown>, own: string[]) =>
  Object.fromEntries(
    Object.entries(params)
      .filter(([k]) => !own.includes(k))
      .map(([k, v]) => [k, String(v)]),
  );

async function openLong(exchange: RecordedBybit) {
  const { venue, sent } = recordedVenue(
    { exchange: 'bybit', market: 'swap', markets, exchangeOptions },
    exchange.answer,
  );
  const quote = await venue.quote(SYMBOL);
  expect(quote).toEqual({ bid: 42544.7, ask: 42548 });
  const text = 'BTCUSDT,buy,vol=0.01,sl_price=41000,be_trigger=500,trail_trigger=1000,trail_distance=800';
  const parsed = parseSignal(text, 'text');
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
  const done = await executeSignal(
    venue,
    bookOn(venue, quote),
    { id: 'sig-bybit', signal: parsed.signal, text },
    Date.now(),
  );
  expect(done.outcome).toMatchObject({
    status: 'executed',
    message: 'opened buy 0.01 BTC/USDT:USDT at 42548 (position 1)',
  });
  return { venue, sent, book: done.book };
}

/** One round of the agent's management: a quote from the venue, the engine's step, the venue carrying it out. */
async function tick(venue: ReturnType<typeof recordedVenue>['venue'], book: VenueBook) {
  const quote = await venue.quote(SYMBOL);
  const step = applyTick(book.state, { time: Date.now(), symbol: SYMBOL, bid: quote.bid, ask: quote.ask });
  const done = await carryOutTick(venue, book, step);
  return { ...done, events: step.events };
}

describe('CCXT venue on Bybit: breakeven and trailing move the exchange-held stop', () => {
  it('each move places a reduce-only conditional stop like the recorded one and cancels the old stop once; the book holds the new level', async () => {
    const exchange = new RecordedBybit();
    const { venue, sent, book } = await openLong(exchange);
    const entry = book.state.positions[0]!.price;
    expect(entry).toBe(42548);
    expect([...exchange.open.values()]).toEqual([`${clientOrderId('sig-bybit', 'p1r0')}s`]);

    // Bid 43044.7: 496.7 in profit, short of the 500 trigger: nothing moves.
    exchange.shift = 500;
    let step = await tick(venue, book);
    expect(step.events).toEqual([]);
    // Bid 43064.7: 516.7 in profit: breakeven, the stop to the entry.
    exchange.shift = 520;
    step = await tick(venue, step.book);
    expect(step.events).toMatchObject([{ type: 'sl_moved', reason: 'breakeven', sl: entry }]);
    expect(step.book.state.positions[0]!.sl).toBe(entry);
    // Bid 43744.7: 1196.7 in profit, trailing 800 behind: 42944.7.
    exchange.shift = 1200;
    step = await tick(venue, step.book);
    expect(step.events).toMatchObject([{ type: 'sl_moved', reason: 'trailing', sl: 42944.7 }]);
    expect(step.book.state.positions[0]!.sl).toBe(42944.7);

    const [first, ...moves] = stopRequests(sent);
    expect(first).toBeDefined();
    expect(moves.map((r) => new URL(r.url).pathname)).toEqual([
      '/v5/order/create',
      '/v5/order/cancel',
      '/v5/order/create',
      '/v5/order/cancel',
    ]);
    // The stop: CCXT's recorded "Swap limit sell with stopLossPrice(Type2)" (triggered below,
    // reduce-only) as a market order: no limit price, orderType Market.
    const stop = requestRecord(REQUESTS, 'createOrder', 'Swap limit sell with stopLossPrice(Type2)').record;
    const recordedStop = without(paramsOf(stop.url, stop.output, 'json'), [
      'symbol',
      'qty',
      'price',
      'triggerPrice',
      'orderType',
    ]);
    for (const [request, revision, trigger] of [
      [moves[0]!, 'p1r1', String(entry)],
      [moves[2]!, 'p1r2', '42944.7'],
    ] as const) {
      expect(new URL(request.url).pathname).toBe(new URL(stop.url).pathname);
      const got = paramsOf(request.url, request.body, 'json');
      expect(without(got, ['symbol', 'qty', 'triggerPrice', 'orderType', 'orderLinkId'])).toEqual(recordedStop);
      expect(got).toMatchObject({
        symbol: 'BTCUSDT',
        orderType: 'Market',
        qty: '0.01',
        triggerPrice: trigger,
        orderLinkId: `${clientOrderId('sig-bybit', revision)}s`,
      });
    }
    // Each cancel: CCXT's recorded "Swap cancelOrder", with the old stop's id.
    const cancel = requestRecord(REQUESTS, 'cancelOrder', 'Swap cancelOrder').record;
    const recordedCancel = without(paramsOf(cancel.url, cancel.output, 'json'), ['symbol', 'orderId']);
    const ids = [first!, moves[0]!, moves[2]!].map((r) =>
      exchange.ids.get((paramsOf(r.url, r.body, 'json') as Record<string, string>).orderLinkId!)!,
    );
    for (const [request, orderId] of [
      [moves[1]!, ids[0]],
      [moves[3]!, ids[1]],
    ] as const) {
      expect(new URL(request.url).pathname).toBe(new URL(cancel.url).pathname);
      const got = paramsOf(request.url, request.body, 'json');
      expect(without(got, ['symbol', 'orderId'])).toEqual(recordedCancel);
      expect(got).toMatchObject({ symbol: 'BTCUSDT', orderId });
    }
    // Each old stop cancelled once; one stop stands, the last one.
    expect(exchange.cancelled).toEqual([ids[0], ids[1]]);
    expect([...exchange.open.values()]).toEqual([`${clientOrderId('sig-bybit', 'p1r2')}s`]);
    expect(step.book.protection['1']).toEqual({ revision: 2, orders: [{ id: ids[2], symbol: SYMBOL, trigger: true }] });
  });
});

describe('CCXT venue on Bybit: fills are the exchange’s, read back by order look-up', () => {
  it('a market entry answered with its ids only is read back: the position and its breakeven are at the exchange’s fill, not the quote', async () => {
    const exchange = new RecordedBybit();
    exchange.fillAt = '42560.5';
    const { venue, sent } = recordedVenue(
      { exchange: 'bybit', market: 'swap', markets, exchangeOptions },
      exchange.answer,
    );
    const quote = await venue.quote(SYMBOL);
    const text = 'BTCUSDT,buy,vol=0.01,sl_price=41000,be_trigger=500';
    const parsed = parseSignal(text, 'text');
    if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems));
    const done = await executeSignal(
      venue,
      bookOn(venue, quote),
      { id: 'sig-fill', signal: parsed.signal, text },
      Date.now(),
    );
    expect(done.outcome).toMatchObject({
      status: 'executed',
      message: 'opened buy 0.01 BTC/USDT:USDT at 42560.5 (position 1)',
    });
    expect(done.outcome.result?.orders[0]).toMatchObject({
      kind: 'market',
      status: 'filled',
      filled: 0.01,
      average: 42560.5,
    });
    // Looked up as Bybit's fetchOrder wants it (acknowledged: its last 500 orders only).
    expect(sent.filter((r) => new URL(r.url).pathname === '/v5/order/realtime')).toHaveLength(1);
    // Bid 43064.7: 504.2 past the fill (516.7 past the quote's 42548): breakeven at the fill.
    exchange.shift = 520;
    const step = await tick(venue, done.book);
    expect(step.events).toMatchObject([{ type: 'sl_moved', reason: 'breakeven', sl: 42560.5 }]);
  });

  it('a pending stop entry is placed with its trigger direction, and followed by order look-ups without ArgumentsRequired', async () => {
    const exchange = new RecordedBybit();
    const { venue } = recordedVenue({ exchange: 'bybit', market: 'swap', markets, exchangeOptions }, exchange.answer);
    await venue.place({
      clientId: clientOrderId('sig-pending', 'o'),
      symbol: SYMBOL,
      side: 'buy',
      kind: 'stop',
      volume: 0.01,
      price: 45000,
    });
    const placed = [...exchange.placed.values()][0]!;
    expect(placed).toMatchObject({ orderType: 'Market', triggerPrice: '45000', triggerDirection: 1 });
    expect(await venue.reports()).toEqual([]);
  });
});
