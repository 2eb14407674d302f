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
import { decimals, fmt, onGrid, round } from './step-grid.js';
import { BinanceUserDataStream } from './binance-user-data-stream.js';

/**
 * A stateful Binance USDⓈ-M futures exchange, written from Binance's published API
 * documentation (the rules are listed in docs the project keeps beside the venue tests), for a
 * real agent process that reaches it through CCXT's `--proxy-url`: each request arrives as
 * `/<the exchange's URL, URL-encoded>`.
 *
 * What it does as Binance documents it: signed requests (X-MBX-APIKEY, HMAC SHA256 of the query
 * and body, timestamp within recvWindow), exchangeInfo filters (LOT_SIZE, MARKET_LOT_SIZE,
 * PRICE_FILTER, PERCENT_PRICE, MIN_NOTIONAL), one-way mode, market orders filled at the book,
 * limit orders resting and filled when the price reaches them, conditional orders in the Algo
 * Service (refused on /fapi/v1/order with -4120) that trigger at the price and place their
 * order in the matching engine (`actualOrderId`), reduce-only refusals (-2022) and expiry when
 * the position closes, client ids unique among open orders (-4116), initial margin at leverage
 * 20 (-2019), account v3 (marginBalance = wallet + unrealized profit), positionRisk v3.
 *
 * Fees (`/_control/fees`, off unless a test sets them): Binance's USDⓈ-M commission, a rate of
 * each fill's notional (price × quantity) in USDT, the maker rate for a LIMIT order, the taker
 * rate for a MARKET one (VIP 0: 0.02 % and 0.05 %), taken from the wallet; every fill is a trade
 * of `GET /fapi/v1/userTrades` (id, orderId, price, qty, commission, commissionAsset,
 * realizedPnl, maker, buyer, time), as Binance's account trade list answers.
 *
 * Funding (`/_control/funding?symbol=S&rate=R[&time=T]`, when a test asks): each open position
 * on S pays (rate > 0, a long) or receives the rate times its notional at the mark price, booked to
 * the wallet as an income record of `GET /fapi/v1/income` (symbol, incomeType FUNDING_FEE, income,
 * asset, info, time, tranId, tradeId), as Binance's income history answers: SIGNED, weight 30,
 * `incomeType` filters, `startTime` and `endTime` are inclusive, neither sent answers the last
 * 7 days, `limit` default 100 and at most 1000, and more records than `limit` in the period are
 * answered from `startTime` on (oldest first, `limit` of them).
 *
 * What it chose where Binance's documentation does not say: funding only when a test asks (no
 * funding clock); a `limit` above 1000 refused with -1130; only `endTime` sent answers the 7 days
 * before it; `page` ignored; the mark price is the last price; the book is one level each side (bid = price, ask = price + one tick) deep
 * enough for any order, so market orders fill whole; a limit order fills whole at its own price
 * once the last price reaches it; one account, one asset (USDT).
 *
 * A thin book (`/_control/thin`, a choice for the partial-fill tests): the book holds `qty` at
 * each price, refilled at each price change, so a resting LIMIT order fills at most `qty` at a
 * time, PARTIALLY_FILLED with `executedQty` and `avgPrice` counting its fills so far, as Binance's
 * order answers do; its cancel answers CANCELED with what filled. With `market=1` a MARKET order
 * (a triggered STOP_MARKET's too) takes what that level holds and the rest expires: EXPIRED with
 * `executedQty` and `avgPrice`, as Binance ends a MARKET order that fills in part (its algo order
 * FINISHED). `/_control/expire` expires a symbol's open entry orders (EXPIRED, as Binance does a
 * GTD order at its goodTillDate).
 *
 * The user data stream (binance-user-data-stream.ts): every order event the exchange makes (a
 * placement, each fill, a cancel, an expiry, a conditional order's trigger and end) is pushed as
 * Binance documents it, `ORDER_TRADE_UPDATE` (x execution type, X status, i, c, l and L of the
 * fill, z and ap so far, n and N its commission, rp its realized profit) or `ALGO_UPDATE` (aid,
 * caid, X, ai the order it placed, aq and ap), and each fill and funding payment changes the
 * account: `ACCOUNT_UPDATE` (m the reason, B the USDT wallet, P the symbol's position).
 *
 * Control endpoints (not Binance's, under `/_control/`): state, price, balance, close, hold,
 * held, fail, thin, expire, fees, funding, stream-drop, listenkey-expire (see `control`).
 */

export interface FakeSymbol {
  symbol: string;
  base: string;
  tick: number;
  step: number;
  minQty: number;
  maxQty: number;
  marketMaxQty: number;
  minNotional: number;
  price: number;
}

export interface FakeOrder {
  orderId: number;
  clientOrderId: string;
  symbol: string;
  side: 'BUY' | 'SELL';
  type: 'LIMIT' | 'MARKET';
  origType: string;
  price: number;
  origQty: number;
  executedQty: number;
  avgPrice: number;
  status: 'NEW' | 'PARTIALLY_FILLED' | 'FILLED' | 'CANCELED' | 'EXPIRED';
  reduceOnly: boolean;
  timeInForce: string;
  time: number;
  updateTime: number;
}

/** A fill as Binance's account trade list (`GET /fapi/v1/userTrades`) answers it. */
export interface FakeTrade {
  id: number;
  orderId: number;
  symbol: string;
  side: 'BUY' | 'SELL';
  price: string;
  qty: string;
  quoteQty: string;
  commission: string;
  commissionAsset: string;
  realizedPnl: string;
  positionSide: 'BOTH';
  maker: boolean;
  buyer: boolean;
  time: number;
}

export interface FakeAlgoOrder {
  algoId: number;
  clientAlgoId: string;
  symbol: string;
  side: 'BUY' | 'SELL';
  orderType: 'STOP' | 'STOP_MARKET' | 'TAKE_PROFIT' | 'TAKE_PROFIT_MARKET';
  quantity: number;
  price: number;
  triggerPrice: number;
  reduceOnly: boolean;
  algoStatus: 'NEW' | 'CANCELED' | 'TRIGGERING' | 'TRIGGERED' | 'FINISHED' | 'REJECTED' | 'EXPIRED';
  actualOrderId: number | null;
  createTime: number;
  updateTime: number;
  triggerTime: number;
}

interface Position {
  /** Signed: > 0 long, < 0 short (one-way mode). */
  amount: number;
  entryPrice: number;
  updateTime: number;
}

/** A funding payment as Binance's income history (`GET /fapi/v1/income`) answers it. */
export interface FakeIncome {
  symbol: string;
  incomeType: 'FUNDING_FEE';
  income: string;
  asset: 'USDT';
  info: 'FUNDING_FEE';
  time: number;
  tranId: number;
  tradeId: '';
}

export type FakeRequest = BinanceRequest;
export type Moment = BinanceMoment;
export type MomentHook = BinanceMomentHook;

interface Hold {
  method: string;
  path: string;
  seconds: number;
  count: number;
}

const LEVERAGE = 20;
const CLIENT_ID = /^[.A-Z:/a-z0-9_-]{1,36}$/;
const DEPTH_LIMITS = new Set([5, 10, 20, 50, 100, 500, 1000]);
const CONDITIONAL = new Set(['STOP', 'STOP_MARKET', 'TAKE_PROFIT', 'TAKE_PROFIT_MARKET', 'TRAILING_STOP_MARKET']);

/** Twenty coins at 100 USDT with one set of filters: a strategy's basket fired at one candle close. */
export const BASKET_SYMBOLS: FakeSymbol[] = [
  ...['BTC', 'ETH', 'SOL', 'XRP', 'ADA', 'DOGE', 'DOT', 'LTC', 'LINK', 'AVAX'],
  ...['ATOM', 'UNI', 'XLM', 'ETC', 'FIL', 'APT', 'ARB', 'OP', 'NEAR', 'TRX'],
].map((base) => ({
  symbol: `${base}USDT`,
  base,
  tick: 0.01,
  step: 0.001,
  minQty: 0.001,
  maxQty: 100_000,
  marketMaxQty: 10_000,
  minNotional: 5,
  price: 100,
}));

export const DEFAULT_SYMBOLS: FakeSymbol[] = [
  {
    symbol: 'BTCUSDT',
    base: 'BTC',
    tick: 0.1,
    step: 0.001,
    minQty: 0.001,
    maxQty: 1000,
    marketMaxQty: 120,
    minNotional: 100,
    price: 50000,
  },
  {
    symbol: 'ETHUSDT',
    base: 'ETH',
    tick: 0.01,
    step: 0.001,
    minQty: 0.001,
    maxQty: 10000,
    marketMaxQty: 2000,
    minNotional: 20,
    price: 3000,
  },
];

export class BinanceUsdmExchange {
  /** Every request, in the order received (control requests excluded). */
  readonly received: FakeRequest[] = [];
  wallet: number;
  private readonly symbols = new Map<string, FakeSymbol>();
  private readonly positions = new Map<string, Position>();
  private readonly orders = new Map<number, FakeOrder>();
  private readonly algoOrders = new Map<number, FakeAlgoOrder>();
  private nextOrderId = 8_389_765_000;
  private nextAlgoId = 3000;
  private readonly holds: Hold[] = [];
  private readonly failures: BinanceFailure[] = [];
  private readonly heldNow = new Set<FakeRequest>();
  private readonly heldBefore: FakeRequest[] = [];
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Symbol → the lots the book holds at each price (absent: deep enough for any order). */
  private readonly thin = new Map<string, number>();
  /** Symbols whose thin book limits MARKET orders too (the rest expiring). */
  private readonly thinMarkets = new Set<string>();
  /** Commission rates of a fill's notional (`/_control/fees`); null: no fees. */
  private feeRates: { maker: number; taker: number } | null = null;
  /** Every fill, as `GET /fapi/v1/userTrades` answers it. */
  private readonly trades: FakeTrade[] = [];
  private nextTradeId = 1;
  /** Every funding payment booked, oldest first, as `GET /fapi/v1/income` answers it. */
  readonly income: FakeIncome[] = [];
  private nextTranId = 9_689_322_392;
  /** Symbol → price changes so far; order id → the change whose refill it took last (a thin book). */
  private readonly priceChanges = new Map<string, number>();
  private readonly refillTaken = new Map<number, number>();
  /** See "kill points" below. */
  private moments: MomentHook | null = null;
  /** The user data stream: listenKey and websocket connections. */
  readonly stream: BinanceUserDataStream;

  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly keys: { apiKey: string; secret: string },
    symbols: FakeSymbol[],
    wallet: number,
  ) {
    for (const s of symbols) this.symbols.set(s.symbol, { ...s });
    this.wallet = wallet;
    this.stream = new BinanceUserDataStream(server);
  }

  static async start(options: {
    apiKey: string;
    secret: string;
    wallet?: number;
    symbols?: FakeSymbol[];
  }): Promise<BinanceUsdmExchange> {
    let exchange: BinanceUsdmExchange | null = null;
    const { server, url } = await listenOnLoopback((req, res) => exchange!.serve(req, res));
    exchange = new BinanceUsdmExchange(
      server,
      url,
      { apiKey: options.apiKey, secret: options.secret },
      options.symbols ?? DEFAULT_SYMBOLS,
      options.wallet ?? 10_000,
    );
    return exchange;
  }

  async stop(): Promise<void> {
    // A hook left set would still be called for what arrives while the server closes.
    this.moments = null;
    for (const timer of this.timers) clearTimeout(timer);
    this.stream.stop();
    await closeServer(this.server);
  }

  /** The requests received for one path (and method). */
  requests(method: string, path: string): FakeRequest[] {
    return this.received.filter((r) => r.method === method && r.path === path);
  }

  // ---- state changes (also reachable through the control endpoints) ----

  /** Sets the last price, then fills the limit orders and triggers the conditional orders it reaches. */
  setPrice(symbol: string, price: number): void {
    const s = this.symbol(symbol);
    s.price = price;
    this.priceChanges.set(s.symbol, (this.priceChanges.get(s.symbol) ?? 0) + 1);
    this.match(symbol);
  }

  /**
   * Books funding at `rate` on the symbol's open position at `time`: a long pays rate × its notional
   * at the mark price (the last price here) and a short receives it (the reverse for a negative
   * rate), to the wallet and the income history. No position: nothing booked. Answers the payment.
   */
  applyFunding(symbol: string, rate: number, time = Date.now()): FakeIncome | null {
    const s = this.symbol(symbol);
    const amount = this.positions.get(s.symbol)?.amount ?? 0;
    if (amount === 0) return null;
    const income = round(-amount * s.price * rate, 0.00000001);
    this.wallet += income;
    const payment: FakeIncome = {
      symbol: s.symbol,
      incomeType: 'FUNDING_FEE',
      income: income.toFixed(8),
      asset: 'USDT',
      info: 'FUNDING_FEE',
      time,
      tranId: this.nextTranId++,
      tradeId: '',
    };
    this.income.push(payment);
    this.income.sort((a, b) => a.time - b.time);
    this.accountEvent('FUNDING_FEE', null);
    return payment;
  }

  /** Closes the position at the market, as a user would on the website. */
  closePosition(symbol: string): void {
    const position = this.positions.get(symbol);
    if (!position || position.amount === 0) return;
    const side = position.amount > 0 ? 'SELL' : 'BUY';
    this.fill(symbol, side, Math.abs(position.amount), this.marketPrice(symbol, side));
  }

  /** Cancels a symbol's open conditional (algo) orders, as a trader does by hand in the exchange's app. */
  cancelConditional(symbol: string): void {
    for (const algo of this.algoOrders.values())
      if (algo.symbol === symbol && algo.algoStatus === 'NEW') {
        algo.algoStatus = 'CANCELED';
        algo.updateTime = Date.now();
        this.algoEvent(algo);
      }
  }

  /**
   * Binance's housekeeping: cancelled or expired orders with no fills are removed after some days
   * (a look-up then answers -2013 "Order does not exist."). Removes them now.
   */
  purgeEnded(): void {
    for (const [id, algo] of this.algoOrders)
      if (algo.algoStatus === 'CANCELED' || algo.algoStatus === 'EXPIRED') this.algoOrders.delete(id);
  }

  state(): Record<string, unknown> {
    return {
      prices: Object.fromEntries([...this.symbols.values()].map((s) => [s.symbol, s.price])),
      wallet: this.wallet,
      unrealized: this.unrealized(),
      positions: [...this.positions.entries()]
        .filter(([, p]) => p.amount !== 0)
        .map(([symbol, p]) => ({ symbol, amount: p.amount, entryPrice: p.entryPrice })),
      orders: [...this.orders.values()].map((o) => ({ ...o })),
      openOrders: [...this.orders.values()].filter((o) => isOpen(o.status)).map((o) => ({ ...o })),
      algoOrders: [...this.algoOrders.values()].map((o) => ({ ...o })),
      openAlgoOrders: [...this.algoOrders.values()].filter((o) => o.algoStatus === 'NEW').map((o) => ({ ...o })),
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
    const apiKey = req.headers['x-mbx-apikey'];
    const { status, payload } = binanceAnswer(() => {
      if (isSigned(request.path)) checkSigned(request, apiKey, this.keys, url, body);
      return this.route(request, apiKey);
    });
    if (this.moments?.(request, 'carried') === 'withhold') {
      this.withheld.push(request);
      return;
    }
    const hold = this.holds.find((h) => h.count > 0 && h.method === request.method && h.path === request.path);
    if (!hold) return send(status, payload, () => this.moments?.(request, 'answered'));
    // Carried out already; the answer comes late (or never, when the agent is killed meanwhile).
    hold.count -= 1;
    this.heldNow.add(request);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.heldNow.delete(request);
      this.heldBefore.push(request);
      send(status, payload);
    }, hold.seconds * 1000);
    this.timers.add(timer);
  }

  private route(request: FakeRequest, apiKey: string | string[] | undefined): unknown {
    const p = request.params;
    if (request.path === '/fapi/v1/listenKey') return this.listenKey(request.method, apiKey);
    switch (`${request.method} ${request.path}`) {
      case 'GET /fapi/v1/userTrades': {
        const symbol = this.symbol(p.symbol ?? '').symbol;
        return this.trades.filter(
          (t) => t.symbol === symbol && (p.orderId === undefined || String(t.orderId) === String(p.orderId)),
        );
      }
      case 'GET /fapi/v1/income':
        return this.incomeHistory(p);
      case 'GET /fapi/v1/exchangeInfo':
        return this.exchangeInfo();
      case 'GET /fapi/v1/depth':
        return this.depth(p);
      case 'GET /fapi/v1/ticker/bookTicker':
        return this.bookTicker(p);
      case 'GET /fapi/v3/account':
        return this.account();
      case 'GET /fapi/v3/positionRisk':
        return this.positionRisk(p.symbol);
      case 'GET /fapi/v1/leverageBracket':
        return [...this.symbols.keys()]
          .filter((s) => p.symbol === undefined || s === p.symbol)
          .map((symbol) => ({
            symbol,
            brackets: [
              {
                bracket: 1,
                initialLeverage: 125,
                notionalCap: 50_000,
                notionalFloor: 0,
                maintMarginRatio: 0.004,
                cum: 0,
              },
            ],
          }));
      case 'GET /sapi/v1/capital/config/getall':
      case 'GET /sapi/v1/margin/allPairs':
        // The wallet's coins and margin pairs: answered empty; tests check they are not asked.
        return [];
      case 'POST /fapi/v1/order':
        return this.newOrder(p);
      case 'GET /fapi/v1/order':
        return this.orderAnswer(this.findOrder(p, -2013, 'Order does not exist.'));
      case 'DELETE /fapi/v1/order':
        return this.cancelOrder(p);
      case 'GET /fapi/v1/openOrders':
        return [...this.orders.values()]
          .filter((o) => isOpen(o.status) && (p.symbol === undefined || o.symbol === p.symbol))
          .map((o) => this.orderAnswer(o));
      case 'POST /fapi/v1/algoOrder':
        return this.algoAnswer(this.newAlgoOrder(p));
      case 'GET /fapi/v1/algoOrder':
        return this.algoAnswer(this.findAlgo(p, -2013, 'Order does not exist.'));
      case 'DELETE /fapi/v1/algoOrder': {
        const algo = this.findAlgo(p, -2011, 'Unknown order sent.');
        if (algo.algoStatus !== 'NEW') throw new BinanceError(-2011, 'Unknown order sent.');
        algo.algoStatus = 'CANCELED';
        algo.updateTime = Date.now();
        this.algoEvent(algo);
        return { algoId: algo.algoId, clientAlgoId: algo.clientAlgoId, code: '200', msg: 'success' };
      }
      case 'GET /fapi/v1/openAlgoOrders':
        return [...this.algoOrders.values()]
          .filter((o) => o.algoStatus === 'NEW' && (p.symbol === undefined || o.symbol === p.symbol))
          .map((o) => this.algoAnswer(o));
      case 'GET /fapi/v1/positionSide/dual':
        return { dualSidePosition: false };
      default:
        throw new BinanceError(-1000, `this test exchange does not implement ${request.method} ${request.path}`, 404);
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
      case 'POST balance':
        this.wallet = number('amount');
        return this.state();
      case 'POST close':
        this.closePosition(q.symbol ?? '');
        return this.state();
      case 'POST hold':
        this.holds.push({
          method: q.method ?? 'POST',
          path: q.path ?? '',
          seconds: number('seconds'),
          count: Number(q.count ?? 1),
        });
        return { ok: true };
      case 'GET held':
        return { now: [...this.heldNow], before: this.heldBefore };
      case 'POST fees':
        this.feeRates = { maker: number('maker'), taker: number('taker') };
        return { ok: true };
      case 'POST funding': {
        const payment = this.applyFunding(
          q.symbol ?? '',
          number('rate'),
          q.time === undefined ? Date.now() : number('time'),
        );
        return { payment };
      }
      case 'POST thin':
        if (number('qty') > 0) this.thin.set(this.symbol(q.symbol).symbol, number('qty'));
        else this.thin.delete(this.symbol(q.symbol).symbol);
        if (number('qty') > 0 && q.market === '1') this.thinMarkets.add(this.symbol(q.symbol).symbol);
        else this.thinMarkets.delete(this.symbol(q.symbol).symbol);
        return { ok: true };
      case 'POST expire':
        for (const order of this.orders.values()) {
          if (order.symbol !== q.symbol || order.reduceOnly || !isOpen(order.status)) continue;
          order.status = 'EXPIRED';
          order.updateTime = Date.now();
          this.orderEvent(order, 'EXPIRED');
        }
        return this.state();
      case 'POST stream-drop':
        this.stream.drop();
        return { ok: true };
      case 'POST listenkey-expire':
        this.stream.expireNow();
        return { ok: true };
      case 'POST fail':
        this.failures.push({
          method: q.method ?? 'POST',
          path: q.path ?? '',
          code: number('code'),
          msg: q.msg ?? 'Internal error.',
          count: Number(q.count ?? 1),
        });
        return { ok: true };
      default:
        throw new Error(`no control endpoint ${method} /_control/${what}`);
    }
  }

  // ---- kill points: a test in the same process acts at the moments a request passes ----

  /** Requests a hook dropped on arrival: never carried out, as if they never left the agent. */
  readonly dropped: FakeRequest[] = [];
  /** Requests carried out whose answer a hook withheld: it is never sent. */
  readonly withheld: FakeRequest[] = [];

  /**
   * `hook` is called, synchronously, when a request (not a control request) arrives, before it
   * is carried out (`arrived`: answer `drop` and it is not carried out, its connection is
   * destroyed); once it is carried out, before its answer (`carried`: `withhold` and no answer is
   * ever sent); and once its answer is handed to the socket (`answered`). A test that owns the
   * agent's process kills it in the hook, so the kill lands at that moment exactly, not after a
   * guessed delay. Null removes it.
   */
  onMoment(hook: MomentHook | null): void {
    this.moments = hook;
  }

  // ---- market data and account ----

  private exchangeInfo(): unknown {
    return {
      timezone: 'UTC',
      serverTime: Date.now(),
      futuresType: 'U_MARGINED',
      rateLimits: [],
      exchangeFilters: [],
      assets: [{ asset: 'USDT', marginAvailable: true, autoAssetExchange: '-10000' }],
      symbols: [...this.symbols.values()].map((s) => ({
        symbol: s.symbol,
        pair: s.symbol,
        contractType: 'PERPETUAL',
        deliveryDate: 4133404800000,
        onboardDate: 1569398400000,
        status: 'TRADING',
        maintMarginPercent: '2.5000',
        requiredMarginPercent: '5.0000',
        baseAsset: s.base,
        quoteAsset: 'USDT',
        marginAsset: 'USDT',
        pricePrecision: decimals(s.tick),
        quantityPrecision: decimals(s.step),
        baseAssetPrecision: 8,
        quotePrecision: 8,
        underlyingType: 'COIN',
        underlyingSubType: [],
        triggerProtect: '0.0500',
        liquidationFee: '0.012500',
        marketTakeBound: '0.05',
        filters: [
          { filterType: 'PRICE_FILTER', minPrice: String(s.tick), maxPrice: '4529764', tickSize: String(s.tick) },
          { filterType: 'LOT_SIZE', minQty: String(s.minQty), maxQty: String(s.maxQty), stepSize: String(s.step) },
          {
            filterType: 'MARKET_LOT_SIZE',
            minQty: String(s.minQty),
            maxQty: String(s.marketMaxQty),
            stepSize: String(s.step),
          },
          { filterType: 'MAX_NUM_ORDERS', limit: 200 },
          { filterType: 'MAX_NUM_ALGO_ORDERS', limit: 10 },
          { filterType: 'MIN_NOTIONAL', notional: String(s.minNotional) },
          { filterType: 'PERCENT_PRICE', multiplierUp: '1.0500', multiplierDown: '0.9500', multiplierDecimal: '4' },
        ],
        orderTypes: [
          'LIMIT',
          'MARKET',
          'STOP',
          'STOP_MARKET',
          'TAKE_PROFIT',
          'TAKE_PROFIT_MARKET',
          'TRAILING_STOP_MARKET',
        ],
        timeInForce: ['GTC', 'IOC', 'FOK', 'GTX', 'GTD'],
      })),
    };
  }

  private depth(p: Record<string, string>): unknown {
    const s = this.symbol(p.symbol);
    const limit = Number(p.limit ?? 500);
    if (!DEPTH_LIMITS.has(limit)) throw new BinanceError(-4021, 'Invalid depth limit.');
    const bid = s.price;
    const ask = round(s.price + s.tick, s.tick);
    return {
      lastUpdateId: Date.now(),
      E: Date.now(),
      T: Date.now(),
      bids: [[fmt(bid, s.tick), '1000']],
      asks: [[fmt(ask, s.tick), '1000']],
    };
  }

  /** The best bid and ask: of one symbol, or of every symbol (an array) when none is named. */
  private bookTicker(p: Record<string, string>): unknown {
    const one = (name: string) => {
      const s = this.symbol(name);
      return {
        symbol: name,
        bidPrice: fmt(s.price, s.tick),
        bidQty: '1000',
        askPrice: fmt(round(s.price + s.tick, s.tick), s.tick),
        askQty: '1000',
        time: Date.now(),
        lastUpdateId: Date.now(),
      };
    };
    return p.symbol !== undefined ? one(p.symbol) : [...this.symbols.keys()].map(one);
  }

  private unrealizedOf(symbol: string): number {
    const p = this.positions.get(symbol);
    if (!p || p.amount === 0) return 0;
    return p.amount * (this.symbol(symbol).price - p.entryPrice);
  }

  private unrealized(): number {
    return [...this.positions.keys()].reduce((sum, symbol) => sum + this.unrealizedOf(symbol), 0);
  }

  private positionMargin(): number {
    return [...this.positions.entries()].reduce(
      (sum, [symbol, p]) => sum + (Math.abs(p.amount) * this.symbol(symbol).price) / LEVERAGE,
      0,
    );
  }

  private openOrderMargin(): number {
    return [...this.orders.values()]
      .filter((o) => isOpen(o.status) && !o.reduceOnly)
      .reduce((sum, o) => sum + ((o.origQty - o.executedQty) * o.price) / LEVERAGE, 0);
  }

  private available(): number {
    return this.wallet + this.unrealized() - this.positionMargin() - this.openOrderMargin();
  }

  private account(): unknown {
    const now = Date.now();
    const unrealized = this.unrealized();
    const money = (n: number) => n.toFixed(8);
    return {
      totalInitialMargin: money(this.positionMargin() + this.openOrderMargin()),
      totalMaintMargin: '0.00000000',
      totalWalletBalance: money(this.wallet),
      totalUnrealizedProfit: money(unrealized),
      totalMarginBalance: money(this.wallet + unrealized),
      totalPositionInitialMargin: money(this.positionMargin()),
      totalOpenOrderInitialMargin: money(this.openOrderMargin()),
      totalCrossWalletBalance: money(this.wallet),
      totalCrossUnPnl: money(unrealized),
      availableBalance: money(this.available()),
      maxWithdrawAmount: money(this.available()),
      assets: [
        {
          asset: 'USDT',
          walletBalance: money(this.wallet),
          unrealizedProfit: money(unrealized),
          marginBalance: money(this.wallet + unrealized),
          maintMargin: '0.00000000',
          initialMargin: money(this.positionMargin() + this.openOrderMargin()),
          positionInitialMargin: money(this.positionMargin()),
          openOrderInitialMargin: money(this.openOrderMargin()),
          crossWalletBalance: money(this.wallet),
          crossUnPnl: money(unrealized),
          availableBalance: money(this.available()),
          maxWithdrawAmount: money(this.available()),
          updateTime: now,
        },
      ],
      positions: [...this.positions.entries()]
        .filter(([, p]) => p.amount !== 0)
        .map(([symbol, p]) => ({
          symbol,
          positionSide: 'BOTH',
          positionAmt: String(p.amount),
          unrealizedProfit: money(this.unrealizedOf(symbol)),
          isolatedMargin: '0',
          notional: money(p.amount * this.symbol(symbol).price),
          isolatedWallet: '0',
          initialMargin: money((Math.abs(p.amount) * this.symbol(symbol).price) / LEVERAGE),
          maintMargin: '0',
          updateTime: p.updateTime,
        })),
    };
  }

  /** Only symbols with a position or open orders, as Binance answers. */
  private positionRisk(only: string | undefined): unknown {
    const symbols = new Set<string>();
    for (const [symbol, p] of this.positions) if (p.amount !== 0) symbols.add(symbol);
    for (const o of this.orders.values()) if (isOpen(o.status)) symbols.add(o.symbol);
    return [...symbols]
      .filter((symbol) => only === undefined || symbol === only)
      .map((symbol) => {
        const p = this.positions.get(symbol) ?? { amount: 0, entryPrice: 0, updateTime: 0 };
        const s = this.symbol(symbol);
        return {
          symbol,
          positionSide: 'BOTH',
          positionAmt: fmt(p.amount, s.step),
          entryPrice: String(p.entryPrice),
          breakEvenPrice: String(p.entryPrice),
          markPrice: String(s.price),
          unRealizedProfit: this.unrealizedOf(symbol).toFixed(8),
          liquidationPrice: '0',
          isolatedMargin: '0',
          notional: (p.amount * s.price).toFixed(8),
          marginAsset: 'USDT',
          isolatedWallet: '0',
          initialMargin: ((Math.abs(p.amount) * s.price) / LEVERAGE).toFixed(8),
          maintMargin: '0',
          positionInitialMargin: ((Math.abs(p.amount) * s.price) / LEVERAGE).toFixed(8),
          openOrderInitialMargin: '0',
          adl: 0,
          bidNotional: '0',
          askNotional: '0',
          updateTime: p.updateTime,
        };
      });
  }

  // ---- orders ----

  private newOrder(p: Record<string, string>): unknown {
    const s = this.symbol(p.symbol);
    const type = p.type ?? '';
    if (CONDITIONAL.has(type))
      throw new BinanceError(
        -4120,
        'Order type not supported for this endpoint. Please use the Algo Order API endpoints instead.',
      );
    if (type !== 'LIMIT' && type !== 'MARKET') throw new BinanceError(-1116, 'Invalid orderType.');
    const side = this.sideOf(p.side);
    this.oneWay(p);
    const clientOrderId = p.newClientOrderId ?? `fake${this.nextOrderId}`;
    this.checkClientId(clientOrderId);
    const quantity = this.quantity(s, p.quantity, type === 'MARKET');
    const reduceOnly = p.reduceOnly === 'true';
    let price = 0;
    if (type === 'LIMIT') {
      if (p.timeInForce === undefined)
        throw new BinanceError(-1102, "Mandatory parameter 'timeInForce' was not sent, was empty/null, or malformed.");
      price = this.price(s, p.price);
      if (side === 'BUY' && price > s.price * 1.05)
        throw new BinanceError(-4016, `Limit price can't be higher than ${fmt(s.price * 1.05, s.tick)}.`);
      if (side === 'SELL' && price < s.price * 0.95)
        throw new BinanceError(-4024, `Limit price can't be lower than ${fmt(s.price * 0.95, s.tick)}.`);
    }
    const at = type === 'MARKET' ? this.marketPrice(s.symbol, side) : price;
    if (!reduceOnly && quantity * at < s.minNotional - 1e-9) {
      throw new BinanceError(
        -4164,
        `Order's notional must be no smaller than ${s.minNotional} (unless you choose reduce only).`,
      );
    }
    this.checkReduceOnly(s.symbol, side, reduceOnly);
    this.checkMargin(s.symbol, side, quantity, at, reduceOnly);
    const now = Date.now();
    const order: FakeOrder = {
      orderId: this.nextOrderId++,
      clientOrderId,
      symbol: s.symbol,
      side,
      type,
      origType: type,
      price,
      origQty: quantity,
      executedQty: 0,
      avgPrice: 0,
      status: 'NEW',
      reduceOnly,
      timeInForce: type === 'LIMIT' ? p.timeInForce! : 'GTC',
      time: now,
      updateTime: now,
    };
    this.orders.set(order.orderId, order);
    this.orderEvent(order, 'NEW');
    if (type === 'MARKET') this.execute(order, at);
    else this.match(s.symbol);
    return this.orderAnswer(order);
  }

  private newAlgoOrder(p: Record<string, string>): FakeAlgoOrder {
    if (p.algoType !== 'CONDITIONAL')
      throw new BinanceError(-1102, "Mandatory parameter 'algoType' was not sent, was empty/null, or malformed.");
    const s = this.symbol(p.symbol);
    const type = p.type ?? '';
    if (type !== 'STOP' && type !== 'STOP_MARKET' && type !== 'TAKE_PROFIT' && type !== 'TAKE_PROFIT_MARKET')
      throw new BinanceError(-1116, 'Invalid orderType.');
    const side = this.sideOf(p.side);
    this.oneWay(p);
    const clientAlgoId = p.clientAlgoId ?? `fakealgo${this.nextAlgoId}`;
    this.checkClientId(clientAlgoId);
    const quantity = this.quantity(s, p.quantity, type.endsWith('_MARKET'));
    const triggerPrice = this.price(s, p.triggerPrice);
    const price = type.endsWith('_MARKET') ? 0 : this.price(s, p.price);
    const reduceOnly = p.reduceOnly === 'true';
    this.checkReduceOnly(s.symbol, side, reduceOnly);
    if (this.reached(type, side, triggerPrice, s.price))
      throw new BinanceError(-2021, 'Order would immediately trigger.');
    const now = Date.now();
    // No margin check before the order triggers (Binance's 2025-11-06 change log).
    const algo: FakeAlgoOrder = {
      algoId: this.nextAlgoId++,
      clientAlgoId,
      symbol: s.symbol,
      side,
      orderType: type,
      quantity,
      price,
      triggerPrice,
      reduceOnly,
      algoStatus: 'NEW',
      actualOrderId: null,
      createTime: now,
      updateTime: now,
      triggerTime: 0,
    };
    this.algoOrders.set(algo.algoId, algo);
    this.algoEvent(algo);
    return algo;
  }

  /** `GET /fapi/v1/income`: the records of the period, oldest first, at most `limit` of them from its start. */
  private incomeHistory(p: Record<string, string>): FakeIncome[] {
    if (p.symbol !== undefined) this.symbol(p.symbol);
    const limit = p.limit === undefined ? 100 : Number(p.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      throw new BinanceError(-1130, "Data sent for parameter 'limit' is not valid.");
    const week = 7 * 24 * 3600 * 1000;
    const end = p.endTime === undefined ? (p.startTime === undefined ? Date.now() : Infinity) : Number(p.endTime);
    const start = p.startTime === undefined ? end - week : Number(p.startTime);
    return this.income
      .filter(
        (r) =>
          (p.symbol === undefined || r.symbol === p.symbol) &&
          (p.incomeType === undefined || r.incomeType === p.incomeType) &&
          r.time >= start &&
          r.time <= end,
      )
      .slice(0, limit);
  }

  private cancelOrder(p: Record<string, string>): unknown {
    const order = this.findOrder(p, -2011, 'Unknown order sent.');
    if (!isOpen(order.status)) throw new BinanceError(-2011, 'Unknown order sent.');
    order.status = 'CANCELED';
    order.updateTime = Date.now();
    this.orderEvent(order, 'CANCELED');
    return this.orderAnswer(order);
  }

  private findOrder(p: Record<string, string>, code: number, msg: string): FakeOrder {
    this.symbol(p.symbol);
    if (p.orderId === undefined && p.origClientOrderId === undefined)
      throw new BinanceError(-1102, "Param 'origClientOrderId' or 'orderId' must be sent, but both were empty/null!");
    // By client id: the open order with it, else the latest one (a client id is unique among open orders only).
    const matches = [...this.orders.values()].filter(
      (o) =>
        o.symbol === p.symbol &&
        (p.orderId !== undefined ? String(o.orderId) === p.orderId : o.clientOrderId === p.origClientOrderId),
    );
    const order = matches.find((o) => isOpen(o.status)) ?? matches.at(-1);
    if (!order) throw new BinanceError(code, msg);
    return order;
  }

  private findAlgo(p: Record<string, string>, code: number, msg: string): FakeAlgoOrder {
    if (p.algoId === undefined && p.clientAlgoId === undefined)
      throw new BinanceError(-1102, "Param 'clientAlgoId' or 'algoId' must be sent, but both were empty/null!");
    const matches = [...this.algoOrders.values()].filter((o) =>
      p.algoId !== undefined ? String(o.algoId) === p.algoId : o.clientAlgoId === p.clientAlgoId,
    );
    const algo = matches.find((o) => o.algoStatus === 'NEW') ?? matches.at(-1);
    if (!algo) throw new BinanceError(code, msg);
    return algo;
  }

  private symbol(symbol: string | undefined): FakeSymbol {
    const s = symbol === undefined ? undefined : this.symbols.get(symbol);
    if (!s) throw new BinanceError(-1121, 'Invalid symbol.');
    return s;
  }

  private sideOf(side: string | undefined): 'BUY' | 'SELL' {
    if (side !== 'BUY' && side !== 'SELL') throw new BinanceError(-1117, 'Invalid side.');
    return side;
  }

  private oneWay(p: Record<string, string>): void {
    if (p.positionSide !== undefined && p.positionSide !== 'BOTH')
      throw new BinanceError(-4061, "Order's position side does not match user's setting.");
  }

  private checkClientId(id: string): void {
    if (!CLIENT_ID.test(id)) throw new BinanceError(-4015, 'Client order id is not valid.');
    const open =
      [...this.orders.values()].some((o) => isOpen(o.status) && o.clientOrderId === id) ||
      [...this.algoOrders.values()].some((o) => o.algoStatus === 'NEW' && o.clientAlgoId === id);
    if (open) throw new BinanceError(-4116, 'ClientOrderId is duplicated.');
  }

  private quantity(s: FakeSymbol, text: string | undefined, market: boolean): number {
    if (text === undefined)
      throw new BinanceError(-1102, "Mandatory parameter 'quantity' was not sent, was empty/null, or malformed.");
    const q = Number(text);
    if (!Number.isFinite(q) || q <= 0)
      throw new BinanceError(-1102, "Mandatory parameter 'quantity' was not sent, was empty/null, or malformed.");
    if ((text.split('.')[1]?.length ?? 0) > decimals(s.step))
      throw new BinanceError(-1111, 'Precision is over the maximum defined for this asset.');
    if (!onGrid(q, s.step)) throw new BinanceError(-4023, `Quantity must be multiple of step size ${s.step}.`);
    if (q < s.minQty - 1e-12) throw new BinanceError(-4004, `Quantity less than or equal to zero.`);
    if (q > (market ? s.marketMaxQty : s.maxQty) + 1e-12)
      throw new BinanceError(-4005, 'Quantity greater than max quantity.');
    return q;
  }

  private price(s: FakeSymbol, text: string | undefined): number {
    const p = Number(text);
    if (text === undefined || !Number.isFinite(p) || p <= 0)
      throw new BinanceError(-1102, "Mandatory parameter 'price' was not sent, was empty/null, or malformed.");
    if (!onGrid(p, s.tick)) throw new BinanceError(-4014, `Price not increased by tick size.`);
    return p;
  }

  /** A reduce-only order that would not reduce the position (none, or one of its own side): -2022. */
  private checkReduceOnly(symbol: string, side: 'BUY' | 'SELL', reduceOnly: boolean): void {
    if (!reduceOnly) return;
    const amount = this.positions.get(symbol)?.amount ?? 0;
    if (amount === 0 || amount > 0 === (side === 'BUY')) throw new BinanceError(-2022, 'ReduceOnly Order is rejected.');
  }

  /** The opening part's initial margin (notional / leverage) against the available balance: -2019. */
  private checkMargin(
    symbol: string,
    side: 'BUY' | 'SELL',
    quantity: number,
    price: number,
    reduceOnly: boolean,
  ): void {
    if (reduceOnly) return;
    const amount = this.positions.get(symbol)?.amount ?? 0;
    const reducing =
      (amount > 0 && side === 'SELL') || (amount < 0 && side === 'BUY') ? Math.min(Math.abs(amount), quantity) : 0;
    const opening = quantity - reducing;
    if (opening > 0 && (opening * price) / LEVERAGE > this.available() + 1e-9)
      throw new BinanceError(-2019, 'Margin is insufficient.');
  }

  /** Buy at the ask, sell at the bid. */
  private marketPrice(symbol: string, side: 'BUY' | 'SELL'): number {
    const s = this.symbol(symbol);
    return side === 'BUY' ? round(s.price + s.tick, s.tick) : s.price;
  }

  private reached(type: string, side: 'BUY' | 'SELL', trigger: number, price: number): boolean {
    const stop = type === 'STOP' || type === 'STOP_MARKET';
    if (stop) return side === 'BUY' ? price >= trigger : price <= trigger;
    return side === 'BUY' ? price <= trigger : price >= trigger;
  }

  /** Fills what the last price reaches: resting limit orders at their price, then triggered conditional orders. */
  private match(symbol: string): void {
    const s = this.symbol(symbol);
    for (const order of [...this.orders.values()]) {
      if (order.symbol !== symbol || !isOpen(order.status) || order.type !== 'LIMIT') continue;
      const reached = order.side === 'BUY' ? s.price <= order.price : s.price >= order.price;
      if (reached) this.execute(order, order.price);
    }
    for (const algo of [...this.algoOrders.values()]) {
      if (
        algo.symbol !== symbol ||
        algo.algoStatus !== 'NEW' ||
        !this.reached(algo.orderType, algo.side, algo.triggerPrice, s.price)
      )
        continue;
      const now = Date.now();
      algo.algoStatus = 'TRIGGERED';
      algo.triggerTime = now;
      algo.updateTime = now;
      const market = algo.orderType.endsWith('_MARKET');
      const order: FakeOrder = {
        orderId: this.nextOrderId++,
        clientOrderId: algo.clientAlgoId,
        symbol,
        side: algo.side,
        type: market ? 'MARKET' : 'LIMIT',
        origType: algo.orderType,
        price: algo.price,
        origQty: algo.quantity,
        executedQty: 0,
        avgPrice: 0,
        status: 'NEW',
        reduceOnly: algo.reduceOnly,
        timeInForce: 'GTC',
        time: now,
        updateTime: now,
      };
      this.orders.set(order.orderId, order);
      algo.actualOrderId = order.orderId;
      this.algoEvent(algo);
      this.orderEvent(order, 'NEW');
      if (market) this.execute(order, this.marketPrice(symbol, algo.side));
      else if (algo.side === 'BUY' ? s.price <= algo.price : s.price >= algo.price) this.execute(order, algo.price);
      if (!isOpen(order.status)) {
        algo.algoStatus = 'FINISHED';
        this.algoEvent(algo);
      }
    }
    // An algo order whose matching-engine order ended since is finished.
    for (const algo of this.algoOrders.values()) {
      if (
        algo.algoStatus === 'TRIGGERED' &&
        algo.actualOrderId !== null &&
        !isOpen(this.orders.get(algo.actualOrderId)!.status)
      ) {
        algo.algoStatus = 'FINISHED';
        this.algoEvent(algo);
      }
    }
  }

  /**
   * Fills an order whole at `price`, or a LIMIT order what a thin book holds (a MARKET one too
   * where asked, its rest expired); a reduce-only one at most the position, and expired when there
   * is none to reduce.
   */
  private execute(order: FakeOrder, price: number): void {
    let quantity = order.origQty - order.executedQty;
    const depth =
      order.type === 'LIMIT' || this.thinMarkets.has(order.symbol) ? this.thin.get(order.symbol) : undefined;
    const thin = depth !== undefined && depth < quantity - 1e-12;
    if (depth !== undefined) {
      // The book's lots at this price are taken once until the price changes again.
      const change = this.priceChanges.get(order.symbol) ?? 0;
      if (this.refillTaken.get(order.orderId) === change) return;
      this.refillTaken.set(order.orderId, change);
    }
    if (thin) quantity = depth;
    if (order.reduceOnly) {
      const amount = this.positions.get(order.symbol)?.amount ?? 0;
      const reducible =
        (amount > 0 && order.side === 'SELL') || (amount < 0 && order.side === 'BUY') ? Math.abs(amount) : 0;
      quantity = Math.min(quantity, reducible);
      if (quantity <= 0) {
        order.status = 'EXPIRED';
        order.updateTime = Date.now();
        this.orderEvent(order, 'EXPIRED');
        return;
      }
    }
    const s = this.symbol(order.symbol);
    order.avgPrice = (order.avgPrice * order.executedQty + price * quantity) / (order.executedQty + quantity);
    order.executedQty = round(order.executedQty + quantity, s.step);
    order.status =
      order.executedQty >= order.origQty - 1e-12
        ? 'FILLED'
        : order.reduceOnly && !thin
          ? 'EXPIRED'
          : 'PARTIALLY_FILLED';
    order.updateTime = Date.now();
    const maker = order.type === 'LIMIT';
    const rate = this.feeRates === null ? 0 : maker ? this.feeRates.maker : this.feeRates.taker;
    const commission = round(price * quantity * rate, 0.00000001);
    const tradeId = this.nextTradeId++;
    // The order's event comes before the account's and before the reduce-only orders the fill expires.
    const realizedPnl = this.fill(order.symbol, order.side, quantity, price, (realized) => {
      this.wallet -= commission;
      this.orderEvent(order, 'TRADE', { quantity, price, commission, realized, maker, tradeId });
    });
    this.trades.push({
      id: tradeId,
      orderId: order.orderId,
      symbol: order.symbol,
      side: order.side,
      price: String(price),
      qty: String(quantity),
      quoteQty: String(price * quantity),
      commission: String(commission),
      commissionAsset: 'USDT',
      realizedPnl: String(realizedPnl),
      positionSide: 'BOTH',
      maker,
      buyer: order.side === 'BUY',
      time: order.updateTime,
    });
    // A MARKET order does not rest: what the book did not hold expires.
    if (order.type === 'MARKET' && order.status === 'PARTIALLY_FILLED') {
      order.status = 'EXPIRED';
      order.updateTime = Date.now();
      this.orderEvent(order, 'EXPIRED');
    }
  }

  /** Changes the position and the wallet (realized profit, answered); a position closed expires its open reduce-only orders. */
  private fill(
    symbol: string,
    side: 'BUY' | 'SELL',
    quantity: number,
    price: number,
    traded?: (realized: number) => void,
  ): number {
    const s = this.symbol(symbol);
    const p = this.positions.get(symbol) ?? { amount: 0, entryPrice: 0, updateTime: 0 };
    const signed = side === 'BUY' ? quantity : -quantity;
    const before = p.amount;
    const after = round(before + signed, s.step);
    let realized = 0;
    if (before !== 0 && Math.sign(before) !== Math.sign(signed)) {
      const closed = Math.min(Math.abs(before), quantity);
      realized = closed * (price - p.entryPrice) * Math.sign(before);
      this.wallet += realized;
    }
    if (after === 0) p.entryPrice = 0;
    else if (before === 0 || Math.sign(after) !== Math.sign(before)) p.entryPrice = price;
    else if (Math.abs(after) > Math.abs(before))
      p.entryPrice = (p.entryPrice * Math.abs(before) + price * quantity) / Math.abs(after);
    p.amount = after;
    p.updateTime = Date.now();
    this.positions.set(symbol, p);
    traded?.(realized);
    this.accountEvent('ORDER', symbol);
    if (after === 0 && before !== 0) {
      for (const order of this.orders.values()) {
        if (order.symbol === symbol && order.reduceOnly && isOpen(order.status)) {
          order.status = 'EXPIRED';
          order.updateTime = Date.now();
          this.orderEvent(order, 'EXPIRED');
        }
      }
    }
    return realized;
  }

  // ---- the user data stream ----

  /** `/fapi/v1/listenKey` (USER_STREAM: the API key, no signature). */
  private listenKey(method: string, apiKey: string | string[] | undefined): unknown {
    if (apiKey === undefined) throw new BinanceError(-2014, 'API-key format invalid.', 401);
    if (apiKey !== this.keys.apiKey)
      throw new BinanceError(-2015, 'Invalid API-key, IP, or permissions for action.', 401);
    if (method === 'POST') return this.stream.start();
    if (method === 'DELETE') return this.stream.close();
    if (method !== 'PUT')
      throw new BinanceError(-1000, `this test exchange does not implement ${method} listenKey`, 404);
    const kept = this.stream.keepAlive();
    if (kept === null) throw new BinanceError(-1125, 'This listenKey does not exist.');
    return kept;
  }

  /** `ORDER_TRADE_UPDATE`: the order as it stands, and the fill that made this event (TRADE). */
  private orderEvent(
    o: FakeOrder,
    x: 'NEW' | 'TRADE' | 'CANCELED' | 'EXPIRED',
    trade?: { quantity: number; price: number; commission: number; realized: number; maker: boolean; tradeId: number },
  ): void {
    const s = this.symbol(o.symbol);
    const now = Date.now();
    this.stream.send({
      e: 'ORDER_TRADE_UPDATE',
      E: now,
      T: o.updateTime,
      o: {
        s: o.symbol,
        c: o.clientOrderId,
        S: o.side,
        o: o.type,
        f: o.timeInForce,
        q: fmt(o.origQty, s.step),
        p: fmt(o.price, s.tick),
        ap: o.executedQty > 0 ? String(o.avgPrice) : '0',
        sp: '0',
        x,
        X: o.status,
        i: o.orderId,
        l: trade ? fmt(trade.quantity, s.step) : '0',
        z: fmt(o.executedQty, s.step),
        L: trade ? String(trade.price) : '0',
        ...(trade && { N: 'USDT', n: String(trade.commission) }),
        T: o.updateTime,
        t: trade?.tradeId ?? 0,
        b: '0',
        a: '0',
        m: trade?.maker ?? false,
        R: o.reduceOnly,
        wt: 'CONTRACT_PRICE',
        ot: o.origType,
        ps: 'BOTH',
        cp: false,
        rp: trade ? String(trade.realized) : '0',
        pP: false,
        si: 0,
        ss: 0,
        V: 'EXPIRE_MAKER',
        pm: 'NONE',
        gtd: 0,
      },
    });
  }

  /** `ALGO_UPDATE`: a conditional order's status, and once triggered the order it placed (`ai`) and its fill. */
  private algoEvent(a: FakeAlgoOrder): void {
    const s = this.symbol(a.symbol);
    const actual = a.actualOrderId === null ? undefined : this.orders.get(a.actualOrderId);
    const now = Date.now();
    this.stream.send({
      e: 'ALGO_UPDATE',
      T: a.updateTime,
      E: now,
      o: {
        caid: a.clientAlgoId,
        aid: a.algoId,
        at: 'CONDITIONAL',
        o: a.orderType,
        s: a.symbol,
        S: a.side,
        ps: 'BOTH',
        f: 'GTC',
        q: fmt(a.quantity, s.step),
        X: a.algoStatus,
        ai: a.actualOrderId === null ? '' : String(a.actualOrderId),
        ap: actual && actual.executedQty > 0 ? String(actual.avgPrice) : '0',
        aq: actual ? fmt(actual.executedQty, s.step) : '0',
        act: actual ? actual.type : '0',
        tp: fmt(a.triggerPrice, s.tick),
        p: fmt(a.price, s.tick),
        V: 'EXPIRE_MAKER',
        wt: 'CONTRACT_PRICE',
        pm: 'NONE',
        cp: false,
        pP: false,
        R: a.reduceOnly,
        tt: a.triggerTime,
        gtd: 0,
      },
    });
  }

  /** `ACCOUNT_UPDATE`: the USDT wallet, and the position of `symbol` (none for a funding payment in cross margin). */
  private accountEvent(reason: 'ORDER' | 'FUNDING_FEE', symbol: string | null): void {
    const now = Date.now();
    const position = symbol === null ? undefined : this.positions.get(symbol);
    const s = symbol === null ? undefined : this.symbol(symbol);
    this.stream.send({
      e: 'ACCOUNT_UPDATE',
      E: now,
      T: now,
      a: {
        m: reason,
        B: [{ a: 'USDT', wb: this.wallet.toFixed(8), cw: this.wallet.toFixed(8), bc: '0' }],
        P:
          s === undefined || position === undefined
            ? []
            : [
                {
                  s: s.symbol,
                  pa: fmt(position.amount, s.step),
                  ep: String(position.entryPrice),
                  bep: String(position.entryPrice),
                  cr: '0',
                  up: this.unrealizedOf(s.symbol).toFixed(8),
                  mt: 'cross',
                  iw: '0',
                  ps: 'BOTH',
                },
              ],
      },
    });
  }

  private orderAnswer(o: FakeOrder): unknown {
    const s = this.symbol(o.symbol);
    return {
      orderId: o.orderId,
      symbol: o.symbol,
      status: o.status,
      clientOrderId: o.clientOrderId,
      price: fmt(o.price, s.tick),
      avgPrice: o.executedQty > 0 ? String(o.avgPrice) : '0',
      origQty: fmt(o.origQty, s.step),
      executedQty: fmt(o.executedQty, s.step),
      cumQty: fmt(o.executedQty, s.step),
      cumQuote: (o.executedQty * o.avgPrice).toFixed(5),
      timeInForce: o.timeInForce,
      type: o.type,
      reduceOnly: o.reduceOnly,
      closePosition: false,
      side: o.side,
      positionSide: 'BOTH',
      stopPrice: '0',
      workingType: 'CONTRACT_PRICE',
      priceProtect: false,
      origType: o.origType,
      priceMatch: 'NONE',
      selfTradePreventionMode: 'EXPIRE_MAKER',
      goodTillDate: 0,
      time: o.time,
      updateTime: o.updateTime,
    };
  }

  private algoAnswer(a: FakeAlgoOrder): unknown {
    const s = this.symbol(a.symbol);
    const actual = a.actualOrderId === null ? undefined : this.orders.get(a.actualOrderId);
    return {
      algoId: a.algoId,
      clientAlgoId: a.clientAlgoId,
      algoType: 'CONDITIONAL',
      orderType: a.orderType,
      symbol: a.symbol,
      side: a.side,
      positionSide: 'BOTH',
      timeInForce: 'GTC',
      quantity: fmt(a.quantity, s.step),
      algoStatus: a.algoStatus,
      actualOrderId: a.actualOrderId === null ? '' : String(a.actualOrderId),
      actualPrice: actual && actual.executedQty > 0 ? String(actual.avgPrice) : '0',
      triggerPrice: fmt(a.triggerPrice, s.tick),
      price: fmt(a.price, s.tick),
      icebergQuantity: null,
      selfTradePreventionMode: 'EXPIRE_MAKER',
      workingType: 'CONTRACT_PRICE',
      priceMatch: 'NONE',
      closePosition: false,
      priceProtect: false,
      reduceOnly: a.reduceOnly,
      createTime: a.createTime,
      updateTime: a.updateTime,
      triggerTime: a.triggerTime,
      goodTillDate: 0,
    };
  }
}

function isOpen(status: FakeOrder['status']): boolean {
  return status === 'NEW' || status === 'PARTIALLY_FILLED';
}

function isSigned(path: string): boolean {
  return (
    path.startsWith('/sapi/') ||
    /^\/fapi\/v\d\/(order|openOrders|algoOrder|openAlgoOrders|account|positionRisk|leverageBracket|positionSide|balance|userTrades|income)/.test(
      path,
    )
  );
}
