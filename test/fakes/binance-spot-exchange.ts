import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  binanceAnswer,
  BinanceError,
  checkSigned,
  arrive,
  serveBinance,
  type BinanceFailure,
  type BinanceMoment,
  type BinanceMomentHook,
  type BinanceRequest,
} from './binance-requests.js';
import { closeServer, controlNumber, listenOnLoopback, type Send } from './proxied-exchange-http.js';
import { fmt, onGrid, round } from './step-grid.js';

/**
 * A stateful Binance spot exchange, written from Binance's published spot API documentation, for
 * a real agent process that reaches it through CCXT's `--proxy-url` (`--exchange binance
 * --market spot`): each request arrives as `/<the exchange's URL, URL-encoded>`.
 *
 * What it does as Binance documents it: SIGNED endpoints (X-MBX-APIKEY, HMAC SHA256 of the query
 * and body, timestamp within recvWindow: -2014, -2015, -1022, -1021); `exchangeInfo` with
 * PRICE_FILTER, LOT_SIZE, MARKET_LOT_SIZE and NOTIONAL filters and the order types allowed;
 * `POST /api/v3/order` for MARKET (by `quantity`), LIMIT, STOP_LOSS and TAKE_PROFIT (a market
 * order once `stopPrice` is reached: STOP_LOSS sells when the last price is at or below it,
 * TAKE_PROFIT at or above, the reverse for buys), STOP_LOSS_LIMIT and TAKE_PROFIT_LIMIT (a limit
 * order at `price` once triggered), each under the same orderId from placement to fill; a stop
 * that would trigger at once is refused (-2010 "Stop price would trigger immediately."); a
 * `newClientOrderId` of an open order is refused (-2010 "Duplicate order sent."); filter failures
 * are -1013 "Filter failure: <FILTER>"; an order the balance cannot pay is refused (-2010 "Account
 * has insufficient balance for requested action."): a sell needs its coins free, a buy its quote
 * coins; an open sell order locks the coins it sells and an open buy limit its quote coins
 * (`GET /api/v3/account` balances: `free` and `locked` per asset); `GET|DELETE /api/v3/order` by
 * orderId or origClientOrderId (-2013 "Order does not exist.", -2011 "Unknown order sent.");
 * `GET /api/v3/openOrders` (symbol optional); `GET /api/v3/myTrades` (symbol required, orderId).
 * The order answer as `newOrderRespType` asks: ACK (ids), RESULT (the order), FULL (the order and
 * its `fills[]`: price, qty, commission, commissionAsset, tradeId); MARKET and LIMIT default to
 * FULL, other types to ACK. Commission: each trade's, in the asset received (a buy's in the base
 * coin, so 0.01 BTC bought at 0.1 % leaves 0.00999 BTC; a sell's in the quote coin), or in BNB
 * at 25 % off where "pay fees with BNB" is on and the account holds enough BNB; each trade
 * carries it (`commission`, `commissionAsset`, 8 decimals) and the balances are net of it; the
 * account answer gives the rate (`makerCommission` in hundredths of a percent, `commissionRates`).
 *
 * What it chose where the documentation does not say: the book is one level each side (bid =
 * price, ask = price + one tick), deep enough for any order; a limit order fills whole at its
 * price once the last price reaches it; one commission rate, maker and taker alike, 0 (no
 * commission) unless a test sets it (`/_control/fees?rate=0.001`, `&bnb=1` to pay with BNB, whose
 * price in the quote coin is `bnbPrice`, default 600); the trader's own doings at the website,
 * through control endpoints: a market sell (`/_control/sell`, of free coins only, as the website
 * would refuse locked ones), a cancel (`/_control/cancel`), a deposit or withdrawal that sets an
 * asset's total (`/_control/balance`); another trader taking part of a resting limit order
 * (`/_control/fill`: PARTIALLY_FILLED, open for the rest); a thin book (`/_control/thin`, for the
 * tests of a market order filled in part): the book holds `qty` each side, so a MARKET order (a
 * triggered STOP_LOSS or TAKE_PROFIT too) takes at most that and its rest expires, EXPIRED with
 * `executedQty`, as Binance says of a MARKET order that fills in part. Ended orders (filled,
 * cancelled, expired) stay queryable by `GET /api/v3/order` for good (Binance archives only old ones).
 *
 * Control endpoints (not Binance's, under `/_control/`): state, price, balance, sell, cancel, fill,
 * thin, fees, fail (the next `count` requests of `method` and `path` answered with Binance's error `code`).
 * Kill points: a test in the same process acts at the moments a request passes (`onMoment`).
 */

export interface SpotSymbol {
  symbol: string;
  base: string;
  quote: string;
  tick: number;
  step: number;
  minQty: number;
  maxQty: number;
  minNotional: number;
  price: number;
}

export type SpotOrderType = 'LIMIT' | 'MARKET' | 'STOP_LOSS' | 'STOP_LOSS_LIMIT' | 'TAKE_PROFIT' | 'TAKE_PROFIT_LIMIT';

export interface SpotOrder {
  orderId: number;
  clientOrderId: string;
  symbol: string;
  side: 'BUY' | 'SELL';
  type: SpotOrderType;
  price: number;
  stopPrice: number;
  origQty: number;
  executedQty: number;
  cummulativeQuoteQty: number;
  status: 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | 'EXPIRED';
  timeInForce: string;
  /** False for a stop not yet triggered (Binance's `isWorking`). */
  isWorking: boolean;
  time: number;
  updateTime: number;
}

export type SpotRequest = BinanceRequest;
export type SpotMoment = BinanceMoment;
export type SpotMomentHook = BinanceMomentHook;

const CLIENT_ID = /^[.A-Z:/a-z0-9_-]{1,36}$/;
const ORDER_TYPES: SpotOrderType[] = [
  'LIMIT',
  'MARKET',
  'STOP_LOSS',
  'STOP_LOSS_LIMIT',
  'TAKE_PROFIT',
  'TAKE_PROFIT_LIMIT',
];
const SIGNED = new Set(['/api/v3/order', '/api/v3/openOrders', '/api/v3/account', '/api/v3/myTrades']);

export const SPOT_SYMBOLS: SpotSymbol[] = [
  {
    symbol: 'BTCUSDT',
    base: 'BTC',
    quote: 'USDT',
    tick: 0.01,
    step: 0.00001,
    minQty: 0.00001,
    maxQty: 9000,
    minNotional: 5,
    price: 50000,
  },
  {
    symbol: 'ETHUSDT',
    base: 'ETH',
    quote: 'USDT',
    tick: 0.01,
    step: 0.0001,
    minQty: 0.0001,
    maxQty: 9000,
    minNotional: 5,
    price: 3000,
  },
];

export class BinanceSpotExchange {
  /** Every request, in the order received (control requests excluded). */
  readonly received: SpotRequest[] = [];
  private readonly symbols = new Map<string, SpotSymbol>();
  /** Each asset's total (free and locked). */
  private readonly totals = new Map<string, number>();
  private readonly orders = new Map<number, SpotOrder>();
  private readonly trades: Record<string, unknown>[] = [];
  private nextOrderId = 28_457_000;
  private nextTradeId = 1;
  /** Requests to answer with an error instead (`/_control/fail`), each `count` times. */
  private readonly failures: BinanceFailure[] = [];
  /** The commission rate (0.001: 0.1 %), whether it is paid in BNB, and BNB's price in the quote coin. */
  private fees = { rate: 0, bnb: false, bnbPrice: 600 };
  /** Symbol → the lots the book holds each side for a market order (absent: deep enough for any). */
  private readonly thin = new Map<string, number>();
  private moments: SpotMomentHook | null = null;
  /** Requests a hook dropped on arrival: never carried out, as if they never left the agent. */
  readonly dropped: SpotRequest[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly keys: { apiKey: string; secret: string },
    balances: Record<string, number>,
  ) {
    for (const s of SPOT_SYMBOLS) this.symbols.set(s.symbol, { ...s });
    for (const [asset, total] of Object.entries(balances)) this.totals.set(asset, total);
  }

  static async start(options: {
    apiKey: string;
    secret: string;
    balances?: Record<string, number>;
  }): Promise<BinanceSpotExchange> {
    let exchange: BinanceSpotExchange | null = null;
    const { server, url } = await listenOnLoopback((req, res) => exchange!.serve(req, res));
    exchange = new BinanceSpotExchange(
      server,
      url,
      { apiKey: options.apiKey, secret: options.secret },
      options.balances ?? { USDT: 10_000 },
    );
    return exchange;
  }

  async stop(): Promise<void> {
    await closeServer(this.server);
  }

  requests(method: string, path: string): SpotRequest[] {
    return this.received.filter((r) => r.method === method && r.path === path);
  }

  /**
   * `hook` is called, synchronously, when a request (not a control request) arrives, before it
   * is carried out (`arrived`: answer `drop` and it is not carried out, its connection is
   * destroyed); once it is carried out, before its answer (`carried`: `withhold` and no answer is
   * ever sent); and once its answer is handed to the socket (`answered`). A test that owns the
   * agent's process kills it in the hook, so the kill lands at that moment exactly. Null removes it.
   */
  onMoment(hook: SpotMomentHook | null): void {
    this.moments = hook;
  }

  // ---- state changes (also reachable through the control endpoints) ----

  /** Sets the last price, then fills the limit orders and triggers the stops it reaches. */
  setPrice(symbol: string, price: number): void {
    this.symbol(symbol).price = price;
    this.match(symbol);
  }

  /** The trader sells `qty` coins at the market on the website: free coins only. */
  sellByHand(symbol: string, qty: number): void {
    const s = this.symbol(symbol);
    if (this.free(s.base) < qty - 1e-12)
      throw new Error(`${qty} ${s.base} are not free (${this.free(s.base)}): the website refuses`);
    this.fill(s, 'SELL', qty, this.marketPrice(s, 'SELL'));
  }

  /** The commission rate of every trade (0.001: 0.1 %), paid in BNB at 25 % off when `bnb` and enough BNB is held. */
  setFees(rate: number, bnb = false, bnbPrice = 600): void {
    this.fees = { rate, bnb, bnbPrice };
  }

  /**
   * Another trader takes `qty` of a working limit order at its price: a fill in part, the order
   * PARTIALLY_FILLED and open for the rest (as Binance's matching engine fills a resting order).
   */
  fillPart(orderId: number, qty: number): void {
    const order = this.orders.get(orderId);
    if (!order || !isOpen(order) || !order.isWorking || order.price === 0)
      throw new Error(`no working limit order ${orderId}`);
    const s = this.symbol(order.symbol);
    if (!(qty > 0) || qty >= round(order.origQty - order.executedQty, s.step) || !onGrid(qty, s.step))
      throw new Error(`${qty} is not a part of what order ${orderId} has left`);
    this.execute(order, order.price, qty);
  }

  /** The trader cancels an open order on the website. */
  cancelByHand(orderId: number): void {
    const order = this.orders.get(orderId);
    if (!order || !isOpen(order)) throw new Error(`no open order ${orderId}`);
    order.status = 'CANCELED';
    order.updateTime = Date.now();
  }

  state(): {
    prices: Record<string, number>;
    balances: Record<string, { free: number; locked: number }>;
    orders: SpotOrder[];
    openOrders: SpotOrder[];
  } {
    const orders = [...this.orders.values()].map((o) => ({ ...o }));
    return {
      prices: Object.fromEntries([...this.symbols.values()].map((s) => [s.symbol, s.price])),
      balances: Object.fromEntries(
        [...this.totals.keys()].map((asset) => [asset, { free: this.free(asset), locked: this.locked(asset) }]),
      ),
      orders,
      openOrders: orders.filter(isOpen),
    };
  }

  // ---- HTTP ----

  private serve(req: IncomingMessage, res: ServerResponse): void {
    serveBinance(
      req,
      res,
      (method, url) => this.control(method, url),
      (...request) => this.answer(...request),
    );
  }

  private answer(req: IncomingMessage, res: ServerResponse, url: URL, body: string, send: Send): void {
    const { moments, dropped, received, failures } = this;
    const request = arrive(req, res, url, body, send, { moments, dropped, received, failures });
    if (request === null) return;
    const { status, payload } = binanceAnswer(() => {
      if (SIGNED.has(request.path)) checkSigned(request, req.headers['x-mbx-apikey'], this.keys, url, body);
      return this.route(request);
    });
    if (this.moments?.(request, 'carried') === 'withhold') return;
    send(status, payload, () => this.moments?.(request, 'answered'));
  }

  private route(request: SpotRequest): unknown {
    const p = request.params;
    switch (`${request.method} ${request.path}`) {
      case 'GET /api/v3/ping':
        return {};
      case 'GET /api/v3/time':
        return { serverTime: Date.now() };
      case 'GET /api/v3/exchangeInfo':
        return this.exchangeInfo();
      case 'GET /api/v3/depth': {
        const s = this.symbol(p.symbol);
        return {
          lastUpdateId: Date.now(),
          bids: [[fmt(s.price, s.tick), '1000']],
          asks: [[fmt(round(s.price + s.tick, s.tick), s.tick), '1000']],
        };
      }
      case 'GET /api/v3/account':
        return this.account();
      case 'POST /api/v3/order':
        return this.newOrder(p);
      case 'GET /api/v3/order':
        return this.orderAnswer(this.findOrder(p, -2013, 'Order does not exist.'));
      case 'DELETE /api/v3/order': {
        const order = this.findOrder(p, -2011, 'Unknown order sent.');
        if (!isOpen(order)) throw new BinanceError(-2011, 'Unknown order sent.');
        order.status = 'CANCELED';
        order.updateTime = Date.now();
        return this.orderAnswer(order);
      }
      case 'GET /api/v3/openOrders':
        if (p.symbol !== undefined) this.symbol(p.symbol);
        return [...this.orders.values()]
          .filter((o) => isOpen(o) && (p.symbol === undefined || o.symbol === p.symbol))
          .map((o) => this.orderAnswer(o));
      case 'GET /api/v3/myTrades': {
        this.symbol(p.symbol);
        return this.trades.filter(
          (t) => t.symbol === p.symbol && (p.orderId === undefined || String(t.orderId) === p.orderId),
        );
      }
      default:
        throw new BinanceError(-1000, `not served by the test exchange: ${request.method} ${request.path}`, 404);
    }
  }

  private control(method: string, url: URL): unknown {
    const what = url.pathname.slice('/_control/'.length);
    const q = Object.fromEntries(url.searchParams);
    const num = controlNumber(what, q);
    switch (`${method} ${what}`) {
      case 'GET state':
        return this.state();
      case 'POST price':
        this.setPrice(q.symbol!, num('price'));
        return this.state();
      case 'POST balance':
        this.totals.set(q.asset!, num('total'));
        return this.state();
      case 'POST sell':
        this.sellByHand(q.symbol!, num('qty'));
        return this.state();
      case 'POST cancel':
        this.cancelByHand(num('orderId'));
        return this.state();
      case 'POST fill':
        this.fillPart(num('orderId'), num('qty'));
        return this.state();
      case 'POST thin':
        if (num('qty') > 0) this.thin.set(this.symbol(q.symbol).symbol, num('qty'));
        else this.thin.delete(this.symbol(q.symbol).symbol);
        return { ok: true };
      case 'POST fail':
        this.failures.push({
          method: q.method ?? 'GET',
          path: q.path ?? '',
          code: num('code'),
          msg: q.msg ?? 'Internal error; unable to process your request. Please try again.',
          count: Number(q.count ?? 1),
        });
        return { ok: true };
      case 'POST fees':
        this.setFees(num('rate'), q.bnb === '1', q.bnbPrice === undefined ? 600 : num('bnbPrice'));
        return this.state();
      default:
        throw new Error(`unknown control ${method} ${what}`);
    }
  }

  private exchangeInfo(): unknown {
    return {
      timezone: 'UTC',
      serverTime: Date.now(),
      rateLimits: [],
      exchangeFilters: [],
      symbols: [...this.symbols.values()].map((s) => ({
        symbol: s.symbol,
        status: 'TRADING',
        baseAsset: s.base,
        baseAssetPrecision: 8,
        quoteAsset: s.quote,
        quotePrecision: 8,
        quoteAssetPrecision: 8,
        baseCommissionPrecision: 8,
        quoteCommissionPrecision: 8,
        orderTypes: [
          'LIMIT',
          'LIMIT_MAKER',
          'MARKET',
          'STOP_LOSS',
          'STOP_LOSS_LIMIT',
          'TAKE_PROFIT',
          'TAKE_PROFIT_LIMIT',
        ],
        icebergAllowed: true,
        ocoAllowed: true,
        otoAllowed: true,
        quoteOrderQtyMarketAllowed: true,
        allowTrailingStop: true,
        cancelReplaceAllowed: true,
        isSpotTradingAllowed: true,
        isMarginTradingAllowed: false,
        filters: [
          {
            filterType: 'PRICE_FILTER',
            minPrice: fmt(s.tick, s.tick),
            maxPrice: '1000000.00',
            tickSize: fmt(s.tick, s.tick),
          },
          {
            filterType: 'LOT_SIZE',
            minQty: fmt(s.minQty, s.step),
            maxQty: fmt(s.maxQty, s.step),
            stepSize: fmt(s.step, s.step),
          },
          { filterType: 'MARKET_LOT_SIZE', minQty: '0', maxQty: fmt(s.maxQty, s.step), stepSize: '0' },
          {
            filterType: 'NOTIONAL',
            minNotional: String(s.minNotional),
            applyMinToMarket: true,
            maxNotional: '9000000.00',
            applyMaxToMarket: false,
            avgPriceMins: 5,
          },
        ],
        permissions: [],
        permissionSets: [['SPOT']],
        defaultSelfTradePreventionMode: 'EXPIRE_MAKER',
        allowedSelfTradePreventionModes: ['EXPIRE_TAKER', 'EXPIRE_MAKER', 'EXPIRE_BOTH'],
      })),
    };
  }

  private account(): unknown {
    const rate = this.fees.rate.toFixed(8);
    return {
      makerCommission: Math.round(this.fees.rate * 10_000),
      takerCommission: Math.round(this.fees.rate * 10_000),
      buyerCommission: 0,
      sellerCommission: 0,
      commissionRates: { maker: rate, taker: rate, buyer: '0.00000000', seller: '0.00000000' },
      canTrade: true,
      canWithdraw: true,
      canDeposit: true,
      brokered: false,
      requireSelfTradePrevention: false,
      preventSor: false,
      updateTime: Date.now(),
      accountType: 'SPOT',
      balances: [...this.totals.keys()].map((asset) => ({
        asset,
        free: this.free(asset).toFixed(8),
        locked: this.locked(asset).toFixed(8),
      })),
      permissions: ['SPOT'],
      uid: 354937868,
    };
  }

  private newOrder(p: Record<string, string>): unknown {
    const s = this.symbol(p.symbol);
    if (p.side !== 'BUY' && p.side !== 'SELL')
      throw new BinanceError(-1102, "Mandatory parameter 'side' was not sent, was empty/null, or malformed.");
    const type = p.type as SpotOrderType;
    if (!ORDER_TYPES.includes(type)) throw new BinanceError(-1116, 'Invalid orderType.');
    const clientOrderId = p.newClientOrderId ?? `web_${this.nextOrderId}`;
    if (!CLIENT_ID.test(clientOrderId))
      throw new BinanceError(
        -1100,
        "Illegal characters found in parameter 'newClientOrderId'; legal range is '^[a-zA-Z0-9-_]{1,36}$'.",
      );
    if ([...this.orders.values()].some((o) => isOpen(o) && o.clientOrderId === clientOrderId))
      throw new BinanceError(-2010, 'Duplicate order sent.');
    const qty = Number(p.quantity);
    if (p.quantity === undefined || !(qty > 0))
      throw new BinanceError(-1102, "Mandatory parameter 'quantity' was not sent, was empty/null, or malformed.");
    if (!onGrid(qty, s.step) || qty < s.minQty - 1e-12 || qty > s.maxQty + 1e-12)
      throw new BinanceError(-1013, 'Filter failure: LOT_SIZE');
    const limit = type === 'LIMIT' || type.endsWith('_LIMIT');
    const price = limit ? Number(p.price) : 0;
    if (limit && (!(price > 0) || !onGrid(price, s.tick)))
      throw new BinanceError(-1013, 'Filter failure: PRICE_FILTER');
    const stop = type.startsWith('STOP_LOSS') || type.startsWith('TAKE_PROFIT');
    const stopPrice = stop ? Number(p.stopPrice) : 0;
    if (stop && (!(stopPrice > 0) || !onGrid(stopPrice, s.tick)))
      throw new BinanceError(-1013, 'Filter failure: PRICE_FILTER');
    const side = p.side;
    if (stop && reached(type, side, stopPrice, s.price))
      throw new BinanceError(-2010, 'Stop price would trigger immediately.');
    const at = limit ? price : stop ? stopPrice : this.marketPrice(s, side);
    if (qty * at < s.minNotional) throw new BinanceError(-1013, 'Filter failure: NOTIONAL');
    const needs = side === 'SELL' ? qty : qty * (type === 'MARKET' ? this.marketPrice(s, side) : limit ? price : 0);
    if (needs > this.free(side === 'SELL' ? s.base : s.quote) + 1e-9)
      throw new BinanceError(-2010, 'Account has insufficient balance for requested action.');
    const now = Date.now();
    const order: SpotOrder = {
      orderId: this.nextOrderId++,
      clientOrderId,
      symbol: s.symbol,
      side,
      type,
      price,
      stopPrice,
      origQty: qty,
      executedQty: 0,
      cummulativeQuoteQty: 0,
      status: 'NEW',
      timeInForce: p.timeInForce ?? 'GTC',
      isWorking: !stop,
      time: now,
      updateTime: now,
    };
    const respType = p.newOrderRespType ?? (type === 'MARKET' || type === 'LIMIT' ? 'FULL' : 'ACK');
    if (!['ACK', 'RESULT', 'FULL'].includes(respType)) throw new BinanceError(-1136, 'Invalid newOrderRespType.');
    this.orders.set(order.orderId, order);
    if (type === 'MARKET') this.executeAtMarket(order);
    else this.match(s.symbol);
    if (respType === 'ACK')
      return { symbol: s.symbol, orderId: order.orderId, orderListId: -1, clientOrderId, transactTime: now };
    const answer = { ...(this.orderAnswer(order) as object), transactTime: now };
    return respType === 'RESULT' ? answer : { ...answer, fills: this.fillsOf(order) };
  }

  private findOrder(p: Record<string, string>, code: number, msg: string): SpotOrder {
    this.symbol(p.symbol);
    if (p.orderId === undefined && p.origClientOrderId === undefined)
      throw new BinanceError(-1102, "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!");
    const order =
      p.orderId !== undefined
        ? this.orders.get(Number(p.orderId))
        : [...this.orders.values()].reverse().find((o) => o.clientOrderId === p.origClientOrderId);
    if (!order || order.symbol !== p.symbol) throw new BinanceError(code, msg);
    return order;
  }

  private symbol(symbol: string | undefined): SpotSymbol {
    const s = symbol === undefined ? undefined : this.symbols.get(symbol);
    if (!s) throw new BinanceError(-1121, 'Invalid symbol.');
    return s;
  }

  private marketPrice(s: SpotSymbol, side: 'BUY' | 'SELL'): number {
    return side === 'BUY' ? round(s.price + s.tick, s.tick) : s.price;
  }

  private locked(asset: string): number {
    let locked = 0;
    for (const o of this.orders.values()) {
      if (!isOpen(o)) continue;
      const s = this.symbol(o.symbol);
      const rest = o.origQty - o.executedQty;
      if (o.side === 'SELL' && s.base === asset) locked += rest;
      if (o.side === 'BUY' && s.quote === asset && o.price > 0) locked += rest * o.price;
    }
    return locked;
  }

  private free(asset: string): number {
    return Math.max(0, (this.totals.get(asset) ?? 0) - this.locked(asset));
  }

  /** Fills the limit orders the last price reaches and triggers the stops it reaches (market ones fill at once). */
  private match(symbol: string): void {
    const s = this.symbol(symbol);
    for (const order of this.orders.values()) {
      if (order.symbol !== symbol || !isOpen(order)) continue;
      if (!order.isWorking) {
        if (!reached(order.type, order.side, order.stopPrice, s.price)) continue;
        order.isWorking = true;
        order.updateTime = Date.now();
        if (order.price === 0) {
          this.executeAtMarket(order);
          continue;
        }
      }
      if (order.price === 0) continue;
      if (order.side === 'BUY' ? s.price <= order.price : s.price >= order.price) this.execute(order, order.price);
    }
  }

  /** A market order filled at the bid or ask: what a thin book holds, the rest expired. */
  private executeAtMarket(order: SpotOrder): void {
    const s = this.symbol(order.symbol);
    const left = round(order.origQty - order.executedQty, s.step);
    const depth = this.thin.get(s.symbol);
    const part = depth !== undefined && depth < left - 1e-12 ? depth : undefined;
    this.execute(order, this.marketPrice(s, order.side), part);
    if (part === undefined) return;
    order.status = 'EXPIRED';
    order.updateTime = Date.now();
  }

  /** Fills `part` of the order (all it has left without), at `price`. */
  private execute(order: SpotOrder, price: number, part?: number): void {
    const s = this.symbol(order.symbol);
    const qty = part ?? round(order.origQty - order.executedQty, s.step);
    order.executedQty = round(order.executedQty + qty, s.step);
    order.cummulativeQuoteQty += qty * price;
    order.status = order.executedQty >= order.origQty - 1e-12 ? 'FILLED' : 'PARTIALLY_FILLED';
    order.updateTime = Date.now();
    const fee = this.fill(s, order.side, qty, price);
    this.trades.push({
      symbol: s.symbol,
      id: this.nextTradeId++,
      orderId: order.orderId,
      orderListId: -1,
      price: fmt(price, s.tick),
      qty: fmt(qty, s.step),
      quoteQty: (qty * price).toFixed(8),
      commission: fee.commission.toFixed(8),
      commissionAsset: fee.asset,
      time: order.updateTime,
      isBuyer: order.side === 'BUY',
      isMaker: order.type === 'LIMIT',
      isBestMatch: true,
    });
  }

  /**
   * Moves the coins of a fill between the base and the quote asset, less its commission, taken
   * from the asset received (or from BNB): the commission and its asset.
   */
  private fill(s: SpotSymbol, side: 'BUY' | 'SELL', qty: number, price: number): { commission: number; asset: string } {
    const sign = side === 'BUY' ? 1 : -1;
    const received = side === 'BUY' ? s.base : s.quote;
    let asset = received;
    let commission = round((side === 'BUY' ? qty : qty * price) * this.fees.rate, 1e-8);
    const inBnb = round((qty * price * this.fees.rate * 0.75) / this.fees.bnbPrice, 1e-8);
    if (this.fees.bnb && commission > 0 && (this.totals.get('BNB') ?? 0) >= inBnb) {
      asset = 'BNB';
      commission = inBnb;
    }
    this.totals.set(s.base, round((this.totals.get(s.base) ?? 0) + sign * qty, 1e-8));
    this.totals.set(s.quote, (this.totals.get(s.quote) ?? 0) - sign * qty * price);
    this.totals.set(asset, round((this.totals.get(asset) ?? 0) - commission, 1e-8));
    return { commission, asset };
  }

  private fillsOf(order: SpotOrder): unknown[] {
    return this.trades
      .filter((t) => t.orderId === order.orderId)
      .map((t) => ({
        price: t.price,
        qty: t.qty,
        commission: t.commission,
        commissionAsset: t.commissionAsset,
        tradeId: t.id,
      }));
  }

  private orderAnswer(o: SpotOrder): unknown {
    const s = this.symbol(o.symbol);
    return {
      symbol: o.symbol,
      orderId: o.orderId,
      orderListId: -1,
      clientOrderId: o.clientOrderId,
      price: fmt(o.price, s.tick),
      origQty: fmt(o.origQty, s.step),
      executedQty: fmt(o.executedQty, s.step),
      cummulativeQuoteQty: o.cummulativeQuoteQty.toFixed(8),
      status: o.status,
      timeInForce: o.timeInForce,
      type: o.type,
      side: o.side,
      stopPrice: fmt(o.stopPrice, s.tick),
      icebergQty: '0.00000000',
      time: o.time,
      updateTime: o.updateTime,
      isWorking: o.isWorking,
      workingTime: o.isWorking ? o.updateTime : -1,
      origQuoteOrderQty: '0.00000000',
      selfTradePreventionMode: 'EXPIRE_MAKER',
    };
  }
}

function isOpen(order: SpotOrder): boolean {
  return order.status === 'NEW' || order.status === 'PARTIALLY_FILLED';
}

/** Whether a stop of `type` on `side` is reached at `price`: STOP_LOSS sells at or below, TAKE_PROFIT at or above; buys the reverse. */
function reached(type: string, side: 'BUY' | 'SELL', stopPrice: number, price: number): boolean {
  const down = type.startsWith('STOP_LOSS') === (side === 'SELL');
  return down ? price <= stopPrice : price >= stopPrice;
}
