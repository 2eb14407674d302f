import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import {
  closeServer,
  controlNumber,
  hexHmacMatches,
  listenOnLoopback,
  serveProxied,
  type Send,
} from './proxied-exchange-http.js';
import { BybitPrivateStream } from './bybit-private-stream.js';
import { decimals, fmt, onGrid, round } from './step-grid.js';

/**
 * A stateful Bybit v5 exchange (linear USDT perpetuals, one-way mode, a unified trading account),
 * written from Bybit's published v5 API documentation, for a real agent process that reaches it
 * through CCXT's `--proxy-url`: each request arrives as `/<the exchange's URL, URL-encoded>`.
 *
 * What it does as Bybit documents it: every answer is `{retCode, retMsg, result, retExtInfo,
 * time}`, errors too (HTTP 200); private requests carry X-BAPI-API-KEY, X-BAPI-TIMESTAMP,
 * X-BAPI-RECV-WINDOW (default 5000) and X-BAPI-SIGN, the hex HMAC-SHA256 of timestamp + key +
 * recvWindow + the query string (GET) or the JSON body (POST): 10003 for another key, 10004 for
 * a wrong signature, 10002 for a timestamp outside the window. Instruments (lotSizeFilter,
 * priceFilter), the order book, the wallet (accountType UNIFIED only), positions (linear: symbol
 * or settleCoin required). Orders: Market and Limit; the create and cancel answers hold only
 * `orderId` and `orderLinkId`; orderLinkId at most 36 letters, digits, `-` or `_`, and unique
 * (110072 "OrderLinkedID is duplicate"); reduce-only refused when there is nothing to reduce
 * (110017); conditional orders (triggerPrice with triggerDirection 1 rising, 2 falling) refused
 * when the price is already there (110092, 110093), `Untriggered` until the last price reaches
 * them, then filled under the same orderId. `GET /v5/order/realtime`: open orders (openOnly 0),
 * the last 500 closed ones (openOnly 1), and by orderId or orderLinkId an order of either kind,
 * priority orderId > orderLinkId > symbol; `orderFilter` Order / StopOrder, absent: both; newest
 * first, `limit` 1 to 50 (default 20) with a cursor; an unknown order is an empty list, as
 * Bybit answers (CCXT makes it OrderNotFound). `order/history` (all orders), `execution/list`
 * (execType Trade and Funding, sorted by execTime newest first, `limit` 1 to 100 (default 50),
 * startTime alone answers 7 days from it, neither the last 7 days, both at most 7 days apart).
 * A position closed cancels its open reduce-only orders (`Deactivated` for untriggered ones).
 * The private websocket stream (bybit-private-stream.ts): every change of an order's state
 * (New or Untriggered when placed, Triggered, Filled, Cancelled, Deactivated) is pushed on the
 * `order` topic, in the order it happens (a target's fill before the stop it deactivates).
 *
 * What it chose where the documentation does not say: parameters Bybit does not list are
 * ignored, and an empty one is absent (`orderId=`); the mark price is the last price; the book
 * is one level each side (bid = price, ask = price + one tick), deep enough for any order;
 * market orders fill whole at the book, `slip` ticks beyond it when a test sets it (the top of
 * book taken by someone else meanwhile), so a fill differs from the quote the agent read; limit
 * orders fill whole at their price once the last price reaches them; no margin check; fees off
 * unless a test sets them; funding only when a test asks. A funding execution's execFee is what
 * the position paid (positive, as trading fees) or received (negative): its value times the rate
 * for a long, minus that for a short.
 *
 * Control endpoints (not Bybit's, under `/_control/`): state, price, slip, fees, funding,
 * close, fail, stream-drop, stream-refuse (see `control`).
 */

export interface BybitSymbol {
  symbol: string;
  base: string;
  tick: number;
  step: number;
  minQty: number;
  maxQty: number;
  maxMktQty: number;
  minNotional: number;
  price: number;
}

export type OrderStatus =
  'New' | 'PartiallyFilled' | 'Untriggered' | 'Triggered' | 'Filled' | 'Cancelled' | 'Deactivated' | 'Rejected';

export interface BybitOrder {
  orderId: string;
  orderLinkId: string;
  symbol: string;
  side: 'Buy' | 'Sell';
  orderType: 'Market' | 'Limit';
  price: number;
  qty: number;
  cumExecQty: number;
  cumExecValue: number;
  cumExecFee: number;
  orderStatus: OrderStatus;
  reduceOnly: boolean;
  /** 0: not conditional. */
  triggerPrice: number;
  triggerDirection: 0 | 1 | 2;
  timeInForce: string;
  cancelType: string;
  createdTime: number;
  updatedTime: number;
}

/** An execution as `GET /v5/execution/list` answers it (a trade or a funding payment). */
export interface BybitExecution {
  symbol: string;
  orderId: string;
  orderLinkId: string;
  side: 'Buy' | 'Sell';
  orderPrice: string;
  orderQty: string;
  leavesQty: string;
  orderType: string;
  stopOrderType: string;
  execFee: string;
  execId: string;
  execPrice: string;
  execQty: string;
  execType: 'Trade' | 'Funding';
  execValue: string;
  execTime: string;
  feeCurrency: string;
  isMaker: boolean;
  feeRate: string;
  markPrice: string;
  closedSize: string;
  seq: number;
}

export interface BybitRequest {
  method: string;
  path: string;
  params: Record<string, string>;
  at: number;
}

interface Position {
  /** Signed: > 0 long, < 0 short (one-way mode). */
  size: number;
  avgPrice: number;
  createdTime: number;
  updatedTime: number;
}

class BybitError extends Error {
  constructor(
    readonly retCode: number,
    msg: string,
  ) {
    super(msg);
  }
}

const LEVERAGE = 10;
const DAY = 24 * 3600 * 1000;
const LINK_ID = /^[A-Za-z0-9_-]{1,36}$/;
const OPEN: ReadonlySet<OrderStatus> = new Set(['New', 'PartiallyFilled', 'Untriggered']);

export const BYBIT_SYMBOLS: BybitSymbol[] = [
  {
    symbol: 'BTCUSDT',
    base: 'BTC',
    tick: 0.1,
    step: 0.001,
    minQty: 0.001,
    maxQty: 1190,
    maxMktQty: 119,
    minNotional: 5,
    price: 50000,
  },
  {
    symbol: 'ETHUSDT',
    base: 'ETH',
    tick: 0.01,
    step: 0.01,
    minQty: 0.01,
    maxQty: 8000,
    maxMktQty: 800,
    minNotional: 5,
    price: 3000,
  },
];

export class BybitV5Exchange {
  /** Every request, in the order received (control requests excluded). */
  readonly received: BybitRequest[] = [];
  wallet: number;
  private readonly symbols = new Map<string, BybitSymbol>();
  private readonly positions = new Map<string, Position>();
  /** In the order placed. */
  private readonly orders: BybitOrder[] = [];
  /** Every execution, in the order booked. */
  readonly executions: BybitExecution[] = [];
  private readonly failures: { method: string; path: string; retCode: number; retMsg: string; count: number }[] = [];
  private slipTicks = 0;
  private feeRates = { maker: 0, taker: 0 };
  private seq = 1000;
  /** The private websocket stream: auth, subscriptions and the `order` topic's pushes. */
  readonly stream: BybitPrivateStream;
  private answered: ((request: BybitRequest) => void) | null = null;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly keys: { apiKey: string; secret: string },
    wallet: number,
  ) {
    for (const s of BYBIT_SYMBOLS) this.symbols.set(s.symbol, { ...s });
    this.wallet = wallet;
    this.stream = new BybitPrivateStream(server, keys);
  }

  static async start(options: { apiKey: string; secret: string; wallet?: number }): Promise<BybitV5Exchange> {
    let exchange: BybitV5Exchange | null = null;
    const { server, url } = await listenOnLoopback((req, res) => exchange!.serve(req, res));
    exchange = new BybitV5Exchange(
      server,
      url,
      { apiKey: options.apiKey, secret: options.secret },
      options.wallet ?? 10_000,
    );
    return exchange;
  }

  async stop(): Promise<void> {
    this.stream.stop();
    await closeServer(this.server);
  }

  /** `hook` is called once each request's answer (not a control request's) is handed to the socket; null removes it. */
  onAnswered(hook: ((request: BybitRequest) => void) | null): void {
    this.answered = hook;
  }

  requests(method: string, path: string): BybitRequest[] {
    return this.received.filter((r) => r.method === method && r.path === path);
  }

  // ---- state changes (also reachable through the control endpoints) ----

  /** Sets the last price, then fills the limit orders and triggers the conditional orders it reaches. */
  setPrice(symbol: string, price: number): void {
    this.symbol(symbol).price = price;
    this.match(symbol);
  }

  /**
   * Books funding at `rate` on the symbol's open position: a long pays its value at the mark
   * price times the rate, a short receives it (the reverse for a negative rate), from the wallet,
   * as an execution of execType Funding. No position: nothing booked.
   */
  applyFunding(symbol: string, rate: number, time = Date.now()): BybitExecution | null {
    const s = this.symbol(symbol);
    const p = this.positions.get(s.symbol);
    if (!p || p.size === 0) return null;
    const value = Math.abs(p.size) * s.price;
    const fee = round(Math.sign(p.size) * value * rate, 0.00000001);
    this.wallet -= fee;
    const execution: BybitExecution = {
      symbol: s.symbol,
      orderId: randomUUID(),
      orderLinkId: '',
      side: p.size > 0 ? 'Buy' : 'Sell',
      orderPrice: '0',
      orderQty: '0',
      leavesQty: '0',
      orderType: 'UNKNOWN',
      stopOrderType: 'UNKNOWN',
      execFee: fee.toFixed(8),
      execId: randomUUID(),
      execPrice: fmt(s.price, s.tick),
      execQty: fmt(Math.abs(p.size), s.step),
      execType: 'Funding',
      execValue: value.toFixed(8),
      execTime: String(time),
      feeCurrency: 'USDT',
      isMaker: false,
      feeRate: String(rate),
      markPrice: fmt(s.price, s.tick),
      closedSize: '0',
      seq: this.seq++,
    };
    this.executions.push(execution);
    return execution;
  }

  /** Closes the position at the market, as a user would on the website. */
  closePosition(symbol: string): void {
    const p = this.positions.get(symbol);
    if (!p || p.size === 0) return;
    const side = p.size > 0 ? 'Sell' : 'Buy';
    this.fill(symbol, side, Math.abs(p.size), this.marketPrice(symbol, side));
  }

  state(): {
    prices: Record<string, number>;
    wallet: number;
    positions: { symbol: string; size: number; avgPrice: number }[];
    orders: BybitOrder[];
    openOrders: BybitOrder[];
  } {
    return {
      prices: Object.fromEntries([...this.symbols.values()].map((s) => [s.symbol, s.price])),
      wallet: this.wallet,
      positions: [...this.positions.entries()]
        .filter(([, p]) => p.size !== 0)
        .map(([symbol, p]) => ({ symbol, size: p.size, avgPrice: p.avgPrice })),
      orders: this.orders.map((o) => ({ ...o })),
      openOrders: this.orders.filter((o) => OPEN.has(o.orderStatus)).map((o) => ({ ...o })),
    };
  }

  // ---- HTTP ----

  private serve(req: IncomingMessage, res: ServerResponse): void {
    serveProxied(req, res, {
      control: (method, url) => this.control(method, url),
      notExchange: (message) => ({ retCode: 10017, retMsg: message }),
      exchange: (url, body, send) => this.answer(req, url, body, send),
    });
  }

  private answer(req: IncomingMessage, url: URL, body: string, send: Send): void {
    const query = url.search.slice(1);
    const params: Record<string, string> = {};
    for (const [k, v] of new URLSearchParams(query)) if (v !== '') params[k] = v;
    if (req.method === 'POST' && body) {
      for (const [k, v] of Object.entries(JSON.parse(body) as Record<string, unknown>))
        if (v !== '' && v !== undefined && v !== null) params[k] = String(v);
    }
    const request: BybitRequest = { method: req.method ?? 'GET', path: url.pathname, params, at: Date.now() };
    this.received.push(request);
    const answer = (retCode: number, retMsg: string, result: unknown) =>
      send(200, { retCode, retMsg, result, retExtInfo: {}, time: Date.now() }, () => this.answered?.(request));
    const failure = this.failures.find((f) => f.count > 0 && f.method === request.method && f.path === request.path);
    if (failure) {
      failure.count -= 1;
      return answer(failure.retCode, failure.retMsg, {});
    }
    try {
      if (request.path.startsWith('/v5/') && !request.path.startsWith('/v5/market/'))
        this.authenticate(req, request.method === 'POST' ? body : query);
      answer(0, 'OK', this.route(request));
    } catch (error) {
      if (!(error instanceof BybitError)) throw error;
      if (error.retCode === 10017) return send(404, { retCode: 10017, retMsg: error.message });
      answer(error.retCode, error.message, {});
    }
  }

  /** X-BAPI-SIGN: hex HMAC-SHA256 of timestamp + key + recvWindow + (query string | JSON body). */
  private authenticate(req: IncomingMessage, payload: string): void {
    const header = (name: string) => {
      const value = req.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const key = header('x-bapi-api-key');
    const timestamp = header('x-bapi-timestamp');
    const recvWindow = header('x-bapi-recv-window') ?? '5000';
    const sign = header('x-bapi-sign');
    if (key === undefined || timestamp === undefined || sign === undefined)
      throw new BybitError(10003, 'API key is invalid.');
    if (key !== this.keys.apiKey) throw new BybitError(10003, 'API key is invalid.');
    if (!hexHmacMatches(this.keys.secret, timestamp + key + recvWindow + payload, sign))
      throw new BybitError(10004, 'Error sign, please check your signature generation algorithm.');
    const now = Date.now();
    const at = Number(timestamp);
    if (!Number.isFinite(at) || at > now + 1000 || now - at > Number(recvWindow))
      throw new BybitError(
        10002,
        `invalid request, please check your server timestamp or recv_window param. req_timestamp[${timestamp}],server_timestamp[${now}],recv_window[${recvWindow}]`,
      );
  }

  private route(request: BybitRequest): unknown {
    const p = request.params;
    const route = `${request.method} ${request.path}`;
    // The endpoints of a product type name it (the account's and the server time's do not).
    if (/^\/v5\/(market\/(instruments-info|orderbook|tickers)|position|order|execution)\//.test(request.path))
      this.linear(p);
    switch (route) {
      case 'GET /v5/market/time': {
        const now = Date.now();
        return { timeSecond: String(Math.floor(now / 1000)), timeNano: `${now}000000` };
      }
      case 'GET /v5/market/instruments-info':
        return this.instruments(p);
      case 'GET /v5/market/orderbook':
        return this.orderbook(p);
      case 'GET /v5/market/tickers':
        return { category: 'linear', list: this.tickers(p) };
      case 'GET /v5/user/query-api':
        return {
          id: '1',
          note: 'signalgate tests',
          apiKey: this.keys.apiKey,
          readOnly: 0,
          secret: '',
          permissions: { ContractTrade: ['Order', 'Position'], Spot: [], Wallet: [], Options: [], Derivatives: [] },
          ips: ['*'],
          type: 1,
          unified: 0,
          uta: 1,
          isMaster: true,
        };
      case 'GET /v5/account/info':
        return { unifiedMarginStatus: 5, marginMode: 'REGULAR_MARGIN', isMasterTrader: false, updatedTime: '0' };
      case 'GET /v5/account/wallet-balance':
        return this.walletBalance(p);
      case 'GET /v5/position/list':
        return this.positionList(p);
      case 'POST /v5/order/create':
        return this.create(p);
      case 'POST /v5/order/cancel':
        return this.cancel(p);
      case 'POST /v5/order/cancel-all':
        return this.cancelAll(p);
      case 'GET /v5/order/realtime':
        return this.realtime(p);
      case 'GET /v5/order/history':
        return this.page(this.selected(p, [...this.orders].reverse()), p, 50, 20, (o) => this.orderAnswer(o));
      case 'GET /v5/execution/list':
        return this.executionList(p);
      default:
        throw new BybitError(10017, `Route not found: ${request.method} ${request.path} (not in this test exchange)`);
    }
  }

  private control(method: string, url: URL): unknown {
    const q = Object.fromEntries(url.searchParams);
    const what = url.pathname.replace(/^\/_control\//, '');
    const number = controlNumber(what, q);
    switch (`${method} ${what}`) {
      case 'GET state':
        return this.state();
      case 'POST price':
        this.setPrice(q.symbol ?? '', number('price'));
        return this.state();
      case 'POST slip':
        this.slipTicks = number('ticks');
        return { ok: true };
      case 'POST fees':
        this.feeRates = { maker: number('maker'), taker: number('taker') };
        return { ok: true };
      case 'POST funding':
        return { execution: this.applyFunding(q.symbol ?? '', number('rate')) };
      case 'POST close':
        this.closePosition(q.symbol ?? '');
        return this.state();
      case 'POST stream-drop':
        this.stream.drop();
        return { ok: true };
      case 'POST stream-refuse':
        if (q.at !== 'upgrade' && q.at !== 'auth')
          throw new Error('/_control/stream-refuse needs at=upgrade or at=auth');
        this.stream.refuse(q.at, number('count'));
        return { ok: true };
      case 'POST fail':
        this.failures.push({
          method: q.method ?? 'POST',
          path: q.path ?? '',
          retCode: number('retCode'),
          retMsg: q.retMsg ?? 'Internal error.',
          count: Number(q.count ?? 1),
        });
        return { ok: true };
      default:
        throw new Error(`no control endpoint ${method} /_control/${what}`);
    }
  }

  // ---- market data and account ----

  private linear(p: Record<string, string>): void {
    if (p.category === undefined) throw new BybitError(10001, 'params error: category is required');
    if (p.category !== 'linear')
      throw new BybitError(10001, `params error: category ${p.category} is not in this test exchange (linear only)`);
  }

  private instruments(p: Record<string, string>): unknown {
    // Nothing in pre-launch here.
    const list =
      p.status === 'PreLaunch'
        ? []
        : [...this.symbols.values()]
            .filter((s) => p.symbol === undefined || s.symbol === p.symbol)
            .map((s) => ({
              symbol: s.symbol,
              contractType: 'LinearPerpetual',
              status: 'Trading',
              baseCoin: s.base,
              quoteCoin: 'USDT',
              launchTime: '1585526400000',
              deliveryTime: '0',
              deliveryFeeRate: '',
              priceScale: String(decimals(s.tick)),
              leverageFilter: { minLeverage: '1', maxLeverage: '100.00', leverageStep: '0.01' },
              priceFilter: { minPrice: fmt(s.tick, s.tick), maxPrice: '1999999.80', tickSize: String(s.tick) },
              lotSizeFilter: {
                maxOrderQty: String(s.maxQty),
                maxMktOrderQty: String(s.maxMktQty),
                minOrderQty: String(s.minQty),
                qtyStep: String(s.step),
                postOnlyMaxOrderQty: String(s.maxQty),
                minNotionalValue: String(s.minNotional),
              },
              unifiedMarginTrade: true,
              fundingInterval: 480,
              settleCoin: 'USDT',
              copyTrading: 'both',
              upperFundingRate: '0.005',
              lowerFundingRate: '-0.005',
              isPreListing: false,
              preListingInfo: null,
            }));
    return { category: 'linear', list, nextPageCursor: '' };
  }

  private orderbook(p: Record<string, string>): unknown {
    const s = this.symbol(p.symbol);
    const limit = Number(p.limit ?? 25);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500) throw new BybitError(10001, 'params error: limit');
    const now = Date.now();
    return {
      s: s.symbol,
      b: [[fmt(s.price, s.tick), '1000']],
      a: [[fmt(s.price + s.tick, s.tick), '1000']],
      ts: now,
      u: this.seq,
      seq: this.seq,
      cts: now,
    };
  }

  private tickers(p: Record<string, string>): unknown[] {
    return [...this.symbols.values()]
      .filter((s) => p.symbol === undefined || s.symbol === p.symbol)
      .map((s) => ({
        symbol: s.symbol,
        lastPrice: fmt(s.price, s.tick),
        markPrice: fmt(s.price, s.tick),
        indexPrice: fmt(s.price, s.tick),
        bid1Price: fmt(s.price, s.tick),
        bid1Size: '1000',
        ask1Price: fmt(s.price + s.tick, s.tick),
        ask1Size: '1000',
        fundingRate: '0.0001',
      }));
  }

  private unrealizedOf(symbol: string): number {
    const p = this.positions.get(symbol);
    return !p || p.size === 0 ? 0 : p.size * (this.symbol(symbol).price - p.avgPrice);
  }

  private walletBalance(p: Record<string, string>): unknown {
    if (p.accountType !== 'UNIFIED')
      throw new BybitError(10001, `accountType only support UNIFIED, got ${p.accountType ?? 'none'}`);
    const unrealized = [...this.positions.keys()].reduce((sum, s) => sum + this.unrealizedOf(s), 0);
    const im = [...this.positions.entries()].reduce(
      (sum, [symbol, q]) => sum + (Math.abs(q.size) * this.symbol(symbol).price) / LEVERAGE,
      0,
    );
    const money = (n: number) => n.toFixed(8);
    const equity = this.wallet + unrealized;
    return {
      list: [
        {
          accountType: 'UNIFIED',
          accountIMRate: equity > 0 ? (im / equity).toFixed(4) : '0',
          accountMMRate: '0',
          totalEquity: money(equity),
          totalWalletBalance: money(this.wallet),
          totalMarginBalance: money(equity),
          totalAvailableBalance: money(equity - im),
          totalPerpUPL: money(unrealized),
          totalInitialMargin: money(im),
          totalMaintenanceMargin: '0',
          coin: [
            {
              coin: 'USDT',
              equity: money(equity),
              usdValue: money(equity),
              walletBalance: money(this.wallet),
              unrealisedPnl: money(unrealized),
              cumRealisedPnl: '0',
              totalPositionIM: money(im),
              totalOrderIM: '0',
              totalPositionMM: '0',
              locked: '0',
              borrowAmount: '0',
              availableToWithdraw: '',
              accruedInterest: '0',
              bonus: '0',
              marginCollateral: true,
              collateralSwitch: true,
            },
          ],
        },
      ],
    };
  }

  private positionList(p: Record<string, string>): unknown {
    if (p.symbol === undefined && p.settleCoin === undefined && p.baseCoin === undefined)
      throw new BybitError(10001, 'params error: symbol or settleCoin is required');
    const list = [...this.positions.entries()]
      .filter(([symbol, q]) => q.size !== 0 && (p.symbol === undefined || symbol === p.symbol))
      .map(([symbol, q]) => {
        const s = this.symbol(symbol);
        const value = Math.abs(q.size) * q.avgPrice;
        return {
          positionIdx: 0,
          riskId: 1,
          riskLimitValue: '2000000',
          symbol,
          side: q.size > 0 ? 'Buy' : 'Sell',
          size: fmt(Math.abs(q.size), s.step),
          avgPrice: String(q.avgPrice),
          positionValue: value.toFixed(8),
          tradeMode: 0,
          autoAddMargin: 0,
          positionStatus: 'Normal',
          leverage: String(LEVERAGE),
          markPrice: fmt(s.price, s.tick),
          liqPrice: '',
          bustPrice: '',
          positionIM: (value / LEVERAGE).toFixed(8),
          positionMM: '0',
          positionBalance: '0',
          tpslMode: 'Full',
          takeProfit: '0',
          stopLoss: '0',
          trailingStop: '0',
          unrealisedPnl: this.unrealizedOf(symbol).toFixed(8),
          curRealisedPnl: '0',
          cumRealisedPnl: '0',
          adlRankIndex: 1,
          createdTime: String(q.createdTime),
          updatedTime: String(q.updatedTime),
          seq: this.seq,
          isReduceOnly: false,
        };
      });
    return { category: 'linear', list, nextPageCursor: '' };
  }

  // ---- orders ----

  private create(p: Record<string, string>): unknown {
    const s = this.symbol(p.symbol);
    if (p.side !== 'Buy' && p.side !== 'Sell') throw new BybitError(10001, 'params error: side invalid');
    if (p.orderType !== 'Market' && p.orderType !== 'Limit')
      throw new BybitError(10001, 'params error: orderType invalid');
    if (p.positionIdx !== undefined && p.positionIdx !== '0')
      throw new BybitError(10001, 'position idx not match position mode');
    const side = p.side;
    const orderLinkId = p.orderLinkId ?? '';
    if (orderLinkId !== '') {
      if (!LINK_ID.test(orderLinkId)) throw new BybitError(10001, 'params error: orderLinkId invalid');
      if (this.orders.some((o) => o.orderLinkId === orderLinkId))
        throw new BybitError(110072, 'OrderLinkedID is duplicate');
    }
    const qty = Number(p.qty);
    if (p.qty === undefined || !Number.isFinite(qty) || qty <= 0) throw new BybitError(10001, 'params error: qty');
    if (!onGrid(qty, s.step) || qty < s.minQty - 1e-12)
      throw new BybitError(10001, `The number of contracts exceeds minimum limit allowed: qty ${p.qty}`);
    if (qty > (p.orderType === 'Market' ? s.maxMktQty : s.maxQty) + 1e-12)
      throw new BybitError(10001, `The number of contracts exceeds maximum limit allowed: qty ${p.qty}`);
    let price = 0;
    if (p.orderType === 'Limit') {
      price = Number(p.price);
      if (p.price === undefined || !(price > 0) || !onGrid(price, s.tick))
        throw new BybitError(10001, 'params error: price invalid');
    }
    const reduceOnly = p.reduceOnly === 'true';
    const triggerPrice = p.triggerPrice === undefined ? 0 : Number(p.triggerPrice);
    const triggerDirection = triggerPrice > 0 ? Number(p.triggerDirection ?? 0) : 0;
    if (triggerPrice > 0) {
      if (!onGrid(triggerPrice, s.tick)) throw new BybitError(10001, 'params error: triggerPrice invalid');
      if (triggerDirection !== 1 && triggerDirection !== 2)
        throw new BybitError(10001, 'params error: triggerDirection is required for a conditional order');
      if (triggerDirection === 1 && triggerPrice <= s.price)
        throw new BybitError(110092, `expect Rising, but trigger_price[${p.triggerPrice}] <= current[${s.price}]`);
      if (triggerDirection === 2 && triggerPrice >= s.price)
        throw new BybitError(110093, `expect Falling, but trigger_price[${p.triggerPrice}] >= current[${s.price}]`);
    }
    if (reduceOnly && this.reducible(s.symbol, side) === 0)
      throw new BybitError(110017, 'Reduce-only rule not satisfied');
    const at = p.orderType === 'Market' ? this.marketPrice(s.symbol, side) : price;
    if (!reduceOnly && qty * at < s.minNotional)
      throw new BybitError(110094, `Order does not meet minimum order value ${s.minNotional}USDT`);
    const now = Date.now();
    const order: BybitOrder = {
      orderId: randomUUID(),
      orderLinkId,
      symbol: s.symbol,
      side,
      orderType: p.orderType,
      price,
      qty,
      cumExecQty: 0,
      cumExecValue: 0,
      cumExecFee: 0,
      orderStatus: triggerPrice > 0 ? 'Untriggered' : 'New',
      reduceOnly,
      triggerPrice,
      triggerDirection: triggerDirection as 0 | 1 | 2,
      timeInForce: p.timeInForce ?? (p.orderType === 'Market' ? 'IOC' : 'GTC'),
      cancelType: 'UNKNOWN',
      createdTime: now,
      updatedTime: now,
    };
    this.orders.push(order);
    this.changed(order);
    if (triggerPrice === 0 && order.orderType === 'Market') this.execute(order, at);
    else if (triggerPrice === 0) this.match(s.symbol);
    return { orderId: order.orderId, orderLinkId: order.orderLinkId };
  }

  private cancel(p: Record<string, string>): unknown {
    this.symbol(p.symbol);
    if (p.orderId === undefined && p.orderLinkId === undefined)
      throw new BybitError(10001, 'params error: orderId or orderLinkId is required');
    const order = this.orders.find((o) =>
      p.orderId !== undefined ? o.orderId === p.orderId : o.orderLinkId === p.orderLinkId,
    );
    if (!order || order.symbol !== p.symbol || !OPEN.has(order.orderStatus))
      throw new BybitError(110001, 'Order does not exist');
    order.orderStatus = order.orderStatus === 'Untriggered' ? 'Deactivated' : 'Cancelled';
    order.cancelType = 'CancelByUser';
    order.updatedTime = Date.now();
    this.changed(order);
    return { orderId: order.orderId, orderLinkId: order.orderLinkId };
  }

  private cancelAll(p: Record<string, string>): unknown {
    if (p.symbol === undefined && p.settleCoin === undefined && p.baseCoin === undefined)
      throw new BybitError(10001, 'params error: symbol, baseCoin or settleCoin is required');
    const list = this.selected(p, this.orders)
      .filter((o) => OPEN.has(o.orderStatus))
      .map((o) => {
        o.orderStatus = o.orderStatus === 'Untriggered' ? 'Deactivated' : 'Cancelled';
        o.cancelType = 'CancelByUser';
        o.updatedTime = Date.now();
        this.changed(o);
        return { orderId: o.orderId, orderLinkId: o.orderLinkId };
      });
    return { list, success: '1' };
  }

  /** Orders matching symbol, orderId > orderLinkId, and orderFilter (absent: both kinds). */
  private selected(p: Record<string, string>, orders: BybitOrder[]): BybitOrder[] {
    return orders.filter(
      (o) =>
        (p.symbol === undefined || o.symbol === p.symbol) &&
        (p.orderId !== undefined
          ? o.orderId === p.orderId
          : p.orderLinkId === undefined || o.orderLinkId === p.orderLinkId) &&
        (p.orderFilter === undefined ||
          (p.orderFilter === 'StopOrder' ? o.triggerPrice > 0 : p.orderFilter === 'Order' && o.triggerPrice === 0)),
    );
  }

  private realtime(p: Record<string, string>): unknown {
    if (p.symbol === undefined && p.settleCoin === undefined && p.baseCoin === undefined)
      throw new BybitError(10001, 'params error: symbol, baseCoin or settleCoin is required');
    const newest = [...this.orders].reverse();
    const closed = newest.filter((o) => !OPEN.has(o.orderStatus)).slice(0, 500);
    const open = newest.filter((o) => OPEN.has(o.orderStatus));
    const byId = p.orderId !== undefined || p.orderLinkId !== undefined;
    const pool = byId
      ? newest.filter((o) => OPEN.has(o.orderStatus) || closed.includes(o))
      : p.openOnly === '1'
        ? closed
        : open;
    return this.page(this.selected(p, pool), p, 50, 20, (o) => this.orderAnswer(o));
  }

  private executionList(p: Record<string, string>): unknown {
    const start = p.startTime === undefined ? undefined : Number(p.startTime);
    const end = p.endTime === undefined ? undefined : Number(p.endTime);
    if (start !== undefined && end !== undefined && end - start > 7 * DAY)
      throw new BybitError(10001, 'params error: endTime - startTime must be at most 7 days');
    const from = start ?? (end ?? Date.now()) - 7 * DAY;
    const to = end ?? (start !== undefined ? start + 7 * DAY : Date.now());
    const list = this.executions
      .filter(
        (e) =>
          Number(e.execTime) >= from &&
          Number(e.execTime) <= to &&
          (p.symbol === undefined || e.symbol === p.symbol) &&
          (p.orderId === undefined || e.orderId === p.orderId) &&
          (p.orderLinkId === undefined || e.orderLinkId === p.orderLinkId) &&
          (p.execType === undefined || e.execType === p.execType),
      )
      .sort((a, b) => Number(b.execTime) - Number(a.execTime) || b.seq - a.seq);
    return this.page(list, p, 100, 50, (e) => e);
  }

  /** `limit` per page (at most `max`, default `fallback`), the next page's cursor while there is one. */
  private page<T>(
    items: T[],
    p: Record<string, string>,
    max: number,
    fallback: number,
    answer: (item: T) => unknown,
  ): unknown {
    const limit = p.limit === undefined ? fallback : Number(p.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > max)
      throw new BybitError(10001, `params error: limit must be 1 to ${max}, got ${p.limit}`);
    const offset = p.cursor === undefined ? 0 : Number(Buffer.from(p.cursor, 'base64url').toString());
    const list = items.slice(offset, offset + limit);
    const next = offset + limit < items.length ? Buffer.from(String(offset + limit)).toString('base64url') : '';
    return { category: 'linear', list: list.map(answer), nextPageCursor: next };
  }

  private symbol(symbol: string | undefined): BybitSymbol {
    const s = symbol === undefined ? undefined : this.symbols.get(symbol);
    if (!s) throw new BybitError(10001, `params error: symbol invalid ${symbol ?? '(none)'}`);
    return s;
  }

  /** What a reduce-only order of `side` may still reduce. */
  private reducible(symbol: string, side: 'Buy' | 'Sell'): number {
    const size = this.positions.get(symbol)?.size ?? 0;
    return (size > 0 && side === 'Sell') || (size < 0 && side === 'Buy') ? Math.abs(size) : 0;
  }

  /** Buy at the ask, sell at the bid, `slip` ticks beyond when a test sets it. */
  private marketPrice(symbol: string, side: 'Buy' | 'Sell'): number {
    const s = this.symbol(symbol);
    return side === 'Buy'
      ? round(s.price + s.tick * (1 + this.slipTicks), s.tick)
      : round(s.price - s.tick * this.slipTicks, s.tick);
  }

  /** Fills the resting limit orders the last price reaches, then triggers the conditional orders it reaches. */
  private match(symbol: string): void {
    const s = this.symbol(symbol);
    for (const order of this.orders) {
      if (order.symbol !== symbol || !OPEN.has(order.orderStatus)) continue;
      if (order.triggerPrice > 0 && order.orderStatus === 'Untriggered') {
        const reached = order.triggerDirection === 1 ? s.price >= order.triggerPrice : s.price <= order.triggerPrice;
        if (!reached) continue;
        order.orderStatus = 'Triggered';
        order.updatedTime = Date.now();
        this.changed(order);
        if (order.orderType === 'Market') this.execute(order, this.marketPrice(symbol, order.side));
        continue;
      }
      if (order.orderType !== 'Limit') continue;
      if (order.side === 'Buy' ? s.price <= order.price : s.price >= order.price) this.execute(order, order.price);
    }
  }

  /** Fills what is left of an order at `price`; a reduce-only one at most the position, cancelled when there is none. */
  private execute(order: BybitOrder, price: number): void {
    const s = this.symbol(order.symbol);
    let qty = round(order.qty - order.cumExecQty, s.step);
    if (order.reduceOnly) qty = Math.min(qty, this.reducible(order.symbol, order.side));
    const now = Date.now();
    order.updatedTime = now;
    if (qty <= 0) {
      order.orderStatus = order.triggerPrice > 0 ? 'Deactivated' : 'Cancelled';
      order.cancelType = 'CancelByReduceOnly';
      this.changed(order);
      return;
    }
    const maker = order.orderType === 'Limit' && order.triggerPrice === 0;
    const rate = maker ? this.feeRates.maker : this.feeRates.taker;
    const fee = round(price * qty * rate, 0.00000001);
    this.wallet -= fee;
    order.cumExecQty = round(order.cumExecQty + qty, s.step);
    order.cumExecValue += price * qty;
    order.cumExecFee += fee;
    order.orderStatus = order.cumExecQty >= order.qty - 1e-12 ? 'Filled' : 'Cancelled';
    this.changed(order);
    const closed = this.reducible(order.symbol, order.side);
    this.executions.push({
      symbol: order.symbol,
      orderId: order.orderId,
      orderLinkId: order.orderLinkId,
      side: order.side,
      orderPrice: fmt(order.price, s.tick),
      orderQty: fmt(order.qty, s.step),
      leavesQty: fmt(order.qty - order.cumExecQty, s.step),
      orderType: order.orderType,
      stopOrderType: order.triggerPrice > 0 ? 'Stop' : 'UNKNOWN',
      execFee: fee.toFixed(8),
      execId: randomUUID(),
      execPrice: fmt(price, s.tick),
      execQty: fmt(qty, s.step),
      execType: 'Trade',
      execValue: (price * qty).toFixed(8),
      execTime: String(now),
      feeCurrency: 'USDT',
      isMaker: maker,
      feeRate: String(rate),
      markPrice: fmt(s.price, s.tick),
      closedSize: fmt(Math.min(closed, qty), s.step),
      seq: this.seq++,
    });
    this.fill(order.symbol, order.side, qty, price);
  }

  /** Changes the position and the wallet (realized profit); a position closed cancels its open reduce-only orders. */
  private fill(symbol: string, side: 'Buy' | 'Sell', qty: number, price: number): void {
    const s = this.symbol(symbol);
    const now = Date.now();
    const p = this.positions.get(symbol) ?? { size: 0, avgPrice: 0, createdTime: now, updatedTime: now };
    const signed = side === 'Buy' ? qty : -qty;
    const before = p.size;
    const after = round(before + signed, s.step);
    if (before !== 0 && Math.sign(before) !== Math.sign(signed))
      this.wallet += Math.min(Math.abs(before), qty) * (price - p.avgPrice) * Math.sign(before);
    if (after === 0) p.avgPrice = 0;
    else if (before === 0 || Math.sign(after) !== Math.sign(before)) {
      p.avgPrice = price;
      p.createdTime = now;
    } else if (Math.abs(after) > Math.abs(before))
      p.avgPrice = (p.avgPrice * Math.abs(before) + price * qty) / Math.abs(after);
    p.size = after;
    p.updatedTime = now;
    this.positions.set(symbol, p);
    if (after !== 0 || before === 0) return;
    for (const order of this.orders) {
      if (order.symbol !== symbol || !order.reduceOnly || !OPEN.has(order.orderStatus)) continue;
      order.orderStatus = order.orderStatus === 'Untriggered' ? 'Deactivated' : 'Cancelled';
      order.cancelType = 'CancelByReduceOnly';
      order.updatedTime = now;
      this.changed(order);
    }
  }

  /** An order's state changed: pushed on the private stream's `order` topic as it is now. */
  private changed(o: BybitOrder): void {
    this.stream.order({ ...(this.orderAnswer(o) as Record<string, unknown>), closedPnl: '0', feeCurrency: '' });
  }

  private orderAnswer(o: BybitOrder): unknown {
    const s = this.symbol(o.symbol);
    const conditional = o.triggerPrice > 0;
    return {
      orderId: o.orderId,
      orderLinkId: o.orderLinkId,
      blockTradeId: '',
      symbol: o.symbol,
      price: fmt(o.price, s.tick),
      qty: fmt(o.qty, s.step),
      side: o.side,
      isLeverage: '',
      positionIdx: 0,
      orderStatus: o.orderStatus,
      createType: 'CreateByUser',
      cancelType: o.cancelType,
      rejectReason: 'EC_NoError',
      avgPrice: o.cumExecQty > 0 ? String(round(o.cumExecValue / o.cumExecQty, s.tick / 100)) : '',
      leavesQty: fmt(OPEN.has(o.orderStatus) ? o.qty - o.cumExecQty : 0, s.step),
      leavesValue: '0',
      cumExecQty: fmt(o.cumExecQty, s.step),
      cumExecValue: o.cumExecValue.toFixed(8),
      cumExecFee: o.cumExecFee.toFixed(8),
      timeInForce: o.timeInForce,
      orderType: o.orderType,
      stopOrderType: conditional ? 'Stop' : '',
      orderIv: '',
      marketUnit: '',
      triggerPrice: conditional ? fmt(o.triggerPrice, s.tick) : '0',
      takeProfit: '0',
      stopLoss: '0',
      tpslMode: '',
      ocoTriggerBy: '',
      tpLimitPrice: '0',
      slLimitPrice: '0',
      tpTriggerBy: '',
      slTriggerBy: '',
      triggerDirection: o.triggerDirection,
      triggerBy: conditional ? 'LastPrice' : '',
      lastPriceOnCreated: '',
      reduceOnly: o.reduceOnly,
      closeOnTrigger: false,
      placeType: '',
      smpType: 'None',
      smpGroup: 0,
      smpOrderId: '',
      createdTime: String(o.createdTime),
      updatedTime: String(o.updatedTime),
    };
  }
}
