import { AsyncLocalStorage } from 'node:async_hooks';
import { Agent as HttpAgent } from 'node:http';
import type { Exchange, Market, Order } from 'ccxt';
import type { FillRules, InstrumentSpec, Quote, Side } from '../../../engine/index.js';
import { isOwnClientOrderId } from '../../client-order-id.js';
import { coinFeeNote } from '../../coin-fee-note.js';
import {
  applyToTracker,
  orderStatusOf,
  track,
  untrack,
  type OrderTracker,
  type OrderUpdate,
} from '../../order-tracker.js';
import type { LedgerFunding } from '../../../protocol/ledger-report.js';
import {
  VenueRefusedError,
  VenueUnreachableError,
  type OrderRequest,
  type CoinHoldings,
  type EndedExit,
  type Protection,
  type Venue,
  type VenueAccount,
  type VenueFill,
  type VenueFunds,
  type VenueHoldings,
  type VenueOrder,
  type VenueOrderRef,
  type VenuePosition,
  type VenueReport,
} from '../../venue.js';
import {
  CcxtHeldState,
  FUNDS_FRESH_MS,
  FUNDS_REFRESH_MS,
  QUOTE_FRESH_MS,
  QUOTE_REFRESH_MS,
  WATCH_MS,
  WATCH_ONE_READ_MS,
  staleNote,
} from './ccxt-held-state.js';
import { fillOfBinanceEvent } from './binance-event-fill.js';
import { instrumentOfMarket } from './ccxt-instrument.js';
import { ccxt } from './ccxt-library.js';
import { CcxtPrivateStream } from './ccxt-private-stream.js';
import { BINANCE_USDM_WINDOWS, RequestBudget, windowsOfPace, type RequestKind } from './ccxt-request-budget.js';
import { netOfCoinFee } from './spot-coin-fee.js';

export type MarketKind = 'spot' | 'swap';
export type PositionMode = 'oneway' | 'hedge';

export interface CcxtCredentials {
  apiKey: string;
  secret: string;
  /** Some exchanges (OKX, KuCoin) also want a passphrase. */
  password?: string;
}

/** CCXT's transport: what `exchange.fetch` is given (after signing) and what it answers (the parsed body). */
export type CcxtTransport = (
  url: string,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
) => Promise<unknown>;

export interface CcxtVenueOptions {
  /** CCXT's exchange id: binance, binanceusdm, bybit, okx… */
  exchange: string;
  market: MarketKind;
  positionMode: PositionMode;
  /** The exchange's test network, through CCXT's own sandbox switch. */
  sandbox: boolean;
  credentials: CcxtCredentials | null;
  /** CCXT's proxyUrl: every request goes to this URL followed by the exchange's URL. */
  proxyUrl: string | null;
  /** More CCXT exchange options (tests give those CCXT's own recorded-traffic tests give). */
  exchangeOptions?: Record<string, unknown>;
  /** Markets to use instead of loading them from the exchange (tests with recorded markets). */
  markets?: Record<string, unknown>;
  /** Replaces CCXT's HTTP transport (recorded traffic in tests); null: CCXT's own. */
  transport: CcxtTransport | null;
  /** How old a held quote may be for a decision (default QUOTE_FRESH_MS); 0: each quote is read (recorded-traffic tests). */
  quoteFreshMs?: number;
  /** Told of the private stream's failures (once per outage) and returns; absent: not told. */
  log?: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
}

/**
 * A crypto exchange through CCXT. Volumes are the engine's lots of the instrument built from the
 * exchange's market (ccxt-instrument.ts): base-currency units on spot markets, contracts on
 * swaps. Every order carries the agent's client order id. Stops are reduce-only stop-market
 * orders and targets reduce-only limit orders, both held by the exchange (on spot, where
 * nothing is reduce-only, plain sell or buy orders of the coins held).
 *
 * Decisions use held data (ccxt-held-state.ts): the top of book of the symbols traded lately,
 * read in the background every QUOTE_REFRESH_MS, and the balance and positions the
 * reconciliation's account read and the agent's own fills keep; data older than its bound is read
 * again first, and the signal's outcome says so. Requests are counted by the exchange's rules
 * (ccxt-request-budget.ts) instead of CCXT's spacing: background reads give way to orders.
 *
 * Where CCXT has the exchange's private stream (`watchOrders`) and keys are given, the account's
 * order events arrive through it (ccxt-private-stream.ts): an event of an order followed wakes
 * the agent, which takes the reports at once instead of at its next management pass. The
 * look-ups of every pass and the reconciliation stay, as the safety net the stream may miss.
 */
export class CcxtVenue implements Venue {
  readonly name: string;
  readonly netsPositions: boolean;
  readonly oneExitOrder: boolean;
  /**
   * The exchange fills its own orders, entries and exits alike; `reports()` asks after each
   * pending entry and each stop and target, so a target filled in a spike between two of the
   * agent's reads is still learned (a quote never closes a position here).
   */
  readonly fills: FillRules = { entries: 'venue', exits: 'venue' };
  /**
   * Signals of different symbols carried out at once: a basket of every symbol a strategy trades
   * goes out together rather than its last symbols waiting for whole signals (order, fill, fees,
   * outcome) to end. The request budget, not this, keeps to the exchange's limits.
   */
  readonly concurrentSignals = CONCURRENT_SIGNALS;
  private readonly exchange: Exchange;
  /**
   * Pending entries, stops and targets placed (or found on start) and not yet ended, by exchange
   * order id: what filled of each as the agent last read it (the tracker), and the order as
   * placed, which the reports are made of (its kind, trigger, and the id the book knows).
   */
  private tracker: OrderTracker = {};
  private readonly followed = new Map<string, VenueOrder>();
  /** Orders `followEnded` handed over and followed; those found ended or unknown, not looked up again while the book holds them. */
  private readonly endedLookUps = new Set<string>();
  /** Found ended or unknown, by id: the lots it had filled (0: nothing; see `endedUnfilled`), or `whole`. */
  private foundEnded = new Map<string, number | 'whole'>();
  /** Entries the exchange filled already when it answered the placement: reported at the next call. */
  private readonly filledAtOnce: VenueReport[] = [];
  /** Spot buy entries filled whose fill waits for their trades (the fee): still pending to the book. */
  private readonly unreported = new Map<string, VenueOrder>();
  private readonly held = new CcxtHeldState();
  private readonly budget: RequestBudget;
  /** Whose request CCXT is sending: the background's reads give way to orders (the default). */
  private readonly requestKind = new AsyncLocalStorage<RequestKind>();
  private quoteTimer: ReturnType<typeof setInterval> | null = null;
  /** Symbols whose background quote read is in flight: one at a time each. */
  private readonly quoting = new Set<string>();
  /** The account read started by our own fill, while in flight: a decision waits for it rather than read again. */
  private settling: Promise<void> | null = null;
  /** A fill came while that read was on its way: one more read follows it (not one per fill). */
  private settleAgain = false;
  private fundsReading = false;
  /** Each spot market's base coin (the markets are loaded once). */
  private baseOf: Record<string, string> | null = null;
  /** The exchange's private stream, where CCXT has one for it and keys are given; null: polling only. */
  private readonly stream: CcxtPrivateStream | null = null;
  /** Followed order id → what the stream said of it since the last reports (`look-up`: read it). */
  private streamed = new Map<string, Order | 'look-up'>();
  /** Followed order id → each fill its stream events told, while it is followed (Binance's carry their commission). */
  private readonly toldFills = new Map<string, VenueFill[]>();
  private wake: ((why: 'reports' | 'connected') => void) | null = null;

  constructor(private readonly options: CcxtVenueOptions) {
    this.name = `ccxt:${options.exchange}`;
    this.netsPositions = options.market === 'swap' && options.positionMode === 'oneway';
    // Spot exchanges lock the coins of each open sell order (Binance refuses the second order
    // with "insufficient balance"): nothing is reduce-only there.
    this.oneExitOrder = options.market === 'spot';
    const Rest = (ccxt as unknown as Record<string, new (config: object) => Exchange>)[options.exchange];
    // CCXT's pro class of the exchange is its REST class with the streams added.
    const Pro = (ccxt.pro as unknown as Record<string, (new (config: object) => Exchange) | undefined>)[
      options.exchange
    ];
    // Only where a stream was tested (Binance USDⓈ-M's user data stream, Bybit v5's private
    // stream, on contracts): on Binance spot a refused connection left a rejection nobody awaited
    // inside CCXT, which ended the process.
    const streams =
      options.credentials !== null &&
      options.transport === null &&
      typeof Pro === 'function' &&
      options.market === 'swap' &&
      (options.exchange === 'binanceusdm' || options.exchange === 'binance' || options.exchange === 'bybit');
    const Class = streams ? Pro! : Rest;
    if (typeof Class !== 'function' || !ccxt.exchanges.includes(options.exchange)) {
      throw new RangeError(
        `--exchange ${options.exchange} is not an exchange CCXT knows; see the list of ids in CCXT's documentation (binance, binanceusdm, bybit, okx…)`,
      );
    }
    this.exchange = new Class({
      apiKey: options.credentials?.apiKey,
      secret: options.credentials?.secret,
      password: options.credentials?.password,
      enableRateLimit: true,
      ...(options.markets && { markets: options.markets }),
      // Bybit's coin list (with keys, asked before the markets) is the wallet's: never used here.
      ...(options.exchange === 'bybit' && { has: { fetchCurrencies: false } }),
      options: {
        defaultType: options.market,
        adjustForTimeDifference: false,
        ...onlyWhatIsTraded(options.exchange, options.market),
        ...options.exchangeOptions,
      },
    });
    if (options.sandbox) this.exchange.setSandboxMode(true);
    this.budget = this.countRequests();
    if (options.proxyUrl !== null) {
      this.exchange.proxyUrl = options.proxyUrl;
      if (streams) proxyStreams(this.exchange, options.proxyUrl);
    }
    if (streams && this.exchange.has['watchOrders'] === true)
      this.stream = new CcxtPrivateStream(this.exchange, this.kindParams(), {
        orders: (orders) => this.streamedOrders(orders),
        opened: () => {
          options.log?.info({ exchange: options.exchange }, "the exchange's private stream is connected");
          this.wake?.('connected');
        },
        failed: (message, first) => {
          if (first)
            options.log?.warn(
              { exchange: options.exchange, err: message },
              "the exchange's private stream failed; reconnecting with backoff, and its orders are looked up every 2 s meanwhile",
            );
        },
      });
    if (options.transport !== null) {
      const transport = options.transport;
      this.exchange.fetch = (async (url: string, method = 'GET', headers?: Record<string, string>, body?: string) =>
        transport(url, method, headers ?? {}, body)) as Exchange['fetch'];
    }
  }

  /**
   * CCXT's limiter spaces every request by its `rateLimit`; the budget instead counts each
   * request's weight (CCXT's table of the exchange's documented weights) in the exchange's own
   * windows, and lets orders pass background reads. Binance USDⓈ-M orders weigh 0 on the IP
   * limit and count on the ORDERS limits.
   */
  private countRequests(): RequestBudget {
    const exchange = this.exchange;
    const usdm = exchange.id === 'binanceusdm' || (exchange.id === 'binance' && this.options.market === 'swap');
    const budget = new RequestBudget(usdm ? BINANCE_USDM_WINDOWS : windowsOfPace(Number(exchange.rateLimit) || 50));
    const cost = exchange.calculateRateLimiterCost.bind(exchange);
    // fetch2 asks the cost, then throttles with it, with no await between: the request is known.
    let last = { method: 'GET', path: '', weight: 1 };
    exchange.calculateRateLimiterCost = (api, method, path, params, config) => {
      const weight = cost(api, method, path, params, config);
      last = { method: String(method), path: String(path), weight: Number(weight) || 1 };
      return weight;
    };
    exchange.throttle = (async () => {
      const placesOrder = last.method === 'POST' && /(^|\/)(order|algoOrder|batchOrders)$/.test(last.path);
      await budget.take({
        weight: usdm && placesOrder && last.path !== 'batchOrders' ? 0 : last.weight,
        placesOrder,
        kind: this.requestKind.getStore() ?? 'order',
      });
    }) as Exchange['throttle'];
    return budget;
  }

  /** Runs reads that keep held data fresh: they give way to orders. */
  private background<T>(action: () => Promise<T>): Promise<T> {
    return this.requestKind.run('background', action);
  }

  /** The CCXT exchange, for tests that look at what it sent. */
  get ccxt(): Exchange {
    return this.exchange;
  }

  async open(): Promise<VenueHoldings> {
    await this.call('load the markets', () => this.exchange.loadMarkets());
    const read = Date.now();
    const spot = this.options.market === 'spot';
    const [{ positions }, orders, balance] = await Promise.all([
      this.positionsAndProfit(),
      this.openOrders(),
      spot ? this.readBalance() : null,
    ]);
    this.held.setPositions(positions, read);
    this.quoteTimer ??= setInterval(() => void this.refreshQuotes(), QUOTE_REFRESH_MS);
    this.quoteTimer.unref?.();
    const own = orders.filter((o) => isOwnClientOrderId(o.clientId));
    for (const order of own) this.follow(order);
    this.stream?.start();
    return {
      positions: spot ? null : positions,
      orders: this.withUnreported(own),
      ...(balance !== null && { coins: this.coinHoldings(balance.coins) }),
    };
  }

  onReports(wake: (why: 'reports' | 'connected') => void): void {
    this.wake = wake;
  }

  status(): Record<string, unknown> {
    return this.stream === null ? {} : { privateStream: this.stream.status() };
  }

  /**
   * Order updates from the private stream: one of an order followed is kept for the next
   * reports and wakes the agent. On Binance USDⓈ-M the update itself is the order's state (its
   * fills so far and status, as the test exchange was checked to send them); elsewhere, and for
   * a conditional order (whose fill is the order it placed), the update only says to read it.
   * Our own market orders are not followed: their events wake nothing.
   */
  private streamedOrders(orders: Order[]): void {
    const usable = this.exchange.id === 'binanceusdm' || this.exchange.id === 'binance';
    let woke = false;
    for (const order of orders) {
      const id = String(order.id ?? '');
      let followed = this.followed.get(id);
      // A triggered conditional order's fill is an order of its own, under its client id.
      if (followed === undefined && order.clientOrderId)
        followed = [...this.followed.values()].find((f) => f.clientId === order.clientOrderId);
      if (followed === undefined) continue;
      const direct = usable && followed.id === id && followed.trigger !== true && typeof order.filled === 'number';
      const fill = direct ? fillOfBinanceEvent(order) : null;
      if (fill !== null) this.toldFills.set(followed.id, [...(this.toldFills.get(followed.id) ?? []), fill]);
      this.streamed.set(followed.id, direct ? { ...order } : 'look-up');
      woke = true;
    }
    if (woke) this.wake?.('reports');
  }

  /** Read whole (the reconciliation's read, every few seconds): it also refreshes the held funds and positions. */
  async account(): Promise<VenueAccount> {
    const read = Date.now();
    const [{ funds, coins }, { positions }, orders] = await this.background(() =>
      Promise.all([this.readBalance(), this.positionsAndProfit(), this.openOrders()]),
    );
    this.held.setPositions(positions, read);
    // A spot market holds coins, not positions: the book's buys are compared with the coins (as at opening).
    const spot = this.options.market === 'spot';
    return {
      ...funds,
      positions: spot ? null : positions,
      orders: this.withUnreported(orders.filter((o) => isOwnClientOrderId(o.clientId))),
      ...(spot && { coins: this.coinHoldings(coins) }),
    };
  }

  /**
   * The account's open orders with the entries whose fill waits for their trades, as they stood
   * before: the book still holds them pending, and the reconciliation must not drop them as gone.
   */
  private withUnreported(orders: VenueOrder[]): VenueOrder[] {
    const listed = new Set(orders.map((o) => o.id));
    const waiting = [...this.unreported.values()].filter((o) => !listed.has(o.id));
    return [...orders, ...waiting.map((o) => ({ ...o, status: 'open' as const, filled: 0, fills: [] }))];
  }

  /** The coins held (free and locked, CCXT's `total`) with each spot market's base coin. */
  private coinHoldings(held: Record<string, number>): CoinHoldings {
    if (this.baseOf === null) {
      this.baseOf = {};
      for (const m of Object.values(this.exchange.markets ?? {}))
        if (m.type === 'spot' && typeof m.base === 'string') this.baseOf[m.symbol] = m.base;
    }
    return { held, baseOf: this.baseOf };
  }

  /**
   * Balance and equity in the settlement currency of `symbol`'s market (the account's main one
   * without a symbol). Binance's futures answer the wallet balance and the margin balance
   * (wallet plus unrealized profit): the balance is the wallet, the equity the margin balance,
   * the unrealized profit counted once. Elsewhere CCXT's total is the wallet balance, and the
   * equity adds the open positions' unrealized profit.
   */
  async funds(symbol?: string, reread?: string[]): Promise<VenueFunds> {
    // Our own fill's account read is on its way: its answer, not a second read.
    if (this.settling !== null) await this.settling;
    const held = this.held.fundsOf(this.settlementCurrency(symbol));
    if (held !== null && Date.now() - held.at <= FUNDS_FRESH_MS) return held.value;
    if (held !== null) reread?.push(staleNote('balance', held, FUNDS_FRESH_MS, Date.now()));
    return this.readFunds(symbol);
  }

  /** Balance and equity as the exchange has them now; held for the next decisions. */
  private async readFunds(symbol?: string): Promise<VenueFunds> {
    return (await this.readBalance(symbol)).funds;
  }

  /** The funds (held for the next decisions) and each coin's total, from one balance read. */
  private async readBalance(symbol?: string): Promise<{ funds: VenueFunds; coins: Record<string, number> }> {
    const read = Date.now();
    const now = await this.balanceNow(symbol);
    this.held.setFunds(now.funds, read);
    return now;
  }

  private async balanceNow(symbol?: string): Promise<{ funds: VenueFunds; coins: Record<string, number> }> {
    const currency = this.settlementCurrency(symbol);
    const raw = await this.call('fetch the balance', () => this.exchange.fetchBalance(this.kindParams()));
    const coins: Record<string, number> = {};
    for (const [coin, total] of Object.entries((raw.total ?? {}) as unknown as Record<string, unknown>))
      if (typeof total === 'number' && Number.isFinite(total)) coins[coin] = total;
    const asset = binanceAsset(raw.info, currency);
    if (asset !== null) return { funds: { balance: asset.wallet, equity: asset.margin, currency }, coins };
    const balance = Number((raw[currency] as { total?: number } | undefined)?.total ?? 0);
    const { unrealized } = await this.positionsAndProfit(currency);
    return { funds: { balance, equity: balance + unrealized, currency }, coins };
  }

  /** The currency a market settles in (swaps) or is quoted in (spot); without a symbol, the account's main one. */
  private settlementCurrency(symbol?: string): string {
    const market = symbol === undefined ? null : this.market(symbol);
    const currency = market ? (market.contract ? market.settle : market.quote) : undefined;
    return currency ?? this.accountCurrency();
  }

  /** The currency balances and profits are counted in: the settle currency of swaps, the quote currency of spot markets. */
  accountCurrency(): string {
    const markets = Object.values(this.exchange.markets ?? {}).filter((m) => m.type === this.options.market);
    const counts = new Map<string, number>();
    for (const m of markets) {
      const currency = (this.options.market === 'swap' ? m.settle : m.quote) ?? '';
      if (currency) counts.set(currency, (counts.get(currency) ?? 0) + 1);
    }
    // USDT where the exchange has it, otherwise its most common one.
    if (counts.has('USDT')) return 'USDT';
    return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 'USDT';
  }

  instrument(symbol: string): InstrumentSpec | null {
    const market = this.market(symbol);
    return market === null ? null : instrumentOfMarket(market, 1);
  }

  /** The venue symbol for a signal symbol: a market of the chosen kind whose exchange id or unified symbol it is. */
  findSymbol(signalSymbol: string): string | null {
    const wanted = signalSymbol.toUpperCase();
    for (const m of Object.values(this.exchange.markets ?? {})) {
      if (m.type !== this.options.market) continue;
      if (m.symbol.toUpperCase() === wanted || String(m.id).toUpperCase() === wanted) return m.symbol;
    }
    return null;
  }

  /** The best bid and ask of the order book: where a market order fills now (a ticker's may lag). Held when fresh. */
  async quote(symbol: string, reread?: string[]): Promise<Quote> {
    const now = Date.now();
    this.held.watch(symbol, now);
    const held = this.held.quote(symbol);
    const bound = this.options.quoteFreshMs ?? QUOTE_FRESH_MS;
    if (held !== null && now - held.at < bound) return held.value;
    if (held !== null && bound > 0) reread?.push(staleNote(`${symbol} quote`, held, bound, now));
    return this.readQuote(symbol);
  }

  /** Keeps the watched symbols' quotes fresh; a failed read leaves the held one to age (the decision then reads). */
  private async refreshQuotes(): Promise<void> {
    // The reconciliation's account read keeps the funds fresh; slower (--reconcile-every), they are read here.
    const funds = this.held.fundsOf(this.accountCurrency());
    if (funds !== null && Date.now() - funds.at > FUNDS_REFRESH_MS && this.settling === null && !this.fundsReading) {
      this.fundsReading = true;
      void this.background(() => this.readFunds())
        .catch(() => undefined)
        .finally(() => (this.fundsReading = false));
    }
    const oneRead = this.readsAllBooksAtOnce();
    const watched = this.held.watchedSymbols(Date.now(), oneRead ? WATCH_ONE_READ_MS : WATCH_MS);
    if (watched.length > 1 && oneRead) {
      if (this.quoting.has(ALL_BOOKS)) return;
      this.quoting.add(ALL_BOOKS);
      void this.background(() => this.readQuotes(watched))
        .catch(() => undefined)
        .finally(() => this.quoting.delete(ALL_BOOKS));
      return;
    }
    for (const symbol of watched) {
      if (this.quoting.has(symbol)) continue;
      this.quoting.add(symbol);
      void this.background(() => this.readQuote(symbol))
        .catch(() => undefined)
        .finally(() => this.quoting.delete(symbol));
    }
  }

  /**
   * Binance USDⓈ-M's book ticker of every symbol (weight 5) in place of one order book per symbol
   * (weight 2 each, every QUOTE_REFRESH_MS): a basket's 20 symbols read one by one need more than
   * the weight the background may use, and their quotes would age until each decision read its own.
   */
  private readsAllBooksAtOnce(): boolean {
    const id = this.exchange.id;
    return this.options.market === 'swap' && (id === 'binanceusdm' || id === 'binance');
  }

  private async readQuotes(symbols: string[]): Promise<void> {
    const read = Date.now();
    const tickers = await this.call('fetch the best bids and asks', () => this.exchange.fetchBidsAsks(symbols));
    for (const symbol of symbols) {
      const { bid, ask } = tickers[symbol] ?? {};
      if (typeof bid === 'number' && typeof ask === 'number' && bid > 0 && ask >= bid)
        this.held.setQuote(symbol, { bid, ask }, read);
    }
  }

  private async readQuote(symbol: string): Promise<Quote> {
    const read = Date.now();
    const book = await this.call(`fetch the ${symbol} order book`, () => this.exchange.fetchOrderBook(symbol, 5));
    const bid = book.bids[0]?.[0];
    const ask = book.asks[0]?.[0];
    if (typeof bid !== 'number' || typeof ask !== 'number' || !(bid > 0) || ask < bid) {
      throw new VenueRefusedError(`${this.options.exchange} gave no usable bid and ask for ${symbol}`);
    }
    this.held.setQuote(symbol, { bid, ask }, read);
    return { bid, ask };
  }

  async place(order: OrderRequest): Promise<VenueOrder> {
    const params: Record<string, unknown> = { clientOrderId: order.clientId, ...this.opening() };
    if (order.kind === 'stop') params.triggerPrice = order.price;
    // Bybit wants the side of the price the trigger waits for: a buy stop above, a sell stop below.
    if (order.kind === 'stop' && this.exchange.id === 'bybit')
      params.triggerDirection = order.side === 'buy' ? 'ascending' : 'descending';
    // A stop entry becomes a stop-market order: it fills once the price gets there.
    const type = order.kind === 'limit' ? 'limit' : 'market';
    const price = order.kind === 'limit' ? (order.price ?? undefined) : undefined;
    const placed = await this.idempotent(
      order.clientId,
      order.symbol,
      order.mayExist === true,
      (clientOrderId) =>
        this.exchange.createOrder(order.symbol, type, order.side, order.volume, price, { ...params, clientOrderId }),
      { ended: 'report' },
    );
    const answered = this.report(
      order.kind === 'market' ? await this.settled(placed, order.symbol) : placed,
      order.kind,
      order,
    );
    const reported = order.kind === 'market' ? await this.withFills(answered) : answered;
    if (order.kind !== 'market') this.follow(reported);
    else {
      this.filledHere(reported, false);
      this.feeMustBeKnown(reported);
    }
    return reported;
  }

  /**
   * A spot buy filled whose fee is not known (its trades could not be read) is not answered: the
   * fee may have been taken from the coins bought, and a position, stop or close of the lots
   * filled would be more than the account holds. The signal is carried out again, and finds the
   * order by its client id.
   */
  private feeMustBeKnown(order: VenueOrder): void {
    if (this.withCoinFee(order) !== 'unknown') return;
    throw new VenueUnreachableError(
      `${this.options.exchange} filled ${order.filled} ${order.symbol} (order ${order.id}) but its trades, which say the fee taken from the coins bought, could not be read; the signal is carried out again and finds the order`,
    );
  }

  /** A spot buy with the fee taken from its coins (netOfCoinFee); elsewhere as given. */
  private withCoinFee(order: VenueOrder): VenueOrder | 'unknown' {
    const market = this.options.market === 'spot' ? this.market(order.symbol) : null;
    const base = market?.base;
    const step = market?.precision?.amount;
    if (typeof base !== 'string' || typeof step !== 'number' || !(step > 0)) return order;
    return netOfCoinFee(order, base, step);
  }

  /**
   * Our own market order filled: the held positions take it at once, and the account is read
   * again. After a close the next decision waits for that read (it must not size on the account
   * before the profit); after an opening on a swap market it goes on with the funds held.
   */
  private filledHere(order: VenueOrder, closing: boolean): void {
    // An opening changes the wallet by its fee only; a close (or a netting order against the
    // position held) realises a profit, which the next decision must see.
    const realises =
      closing ||
      this.options.market !== 'swap' ||
      (this.netsPositions &&
        (this.held.heldPositions()?.value ?? []).some((p) => p.symbol === order.symbol && p.side !== order.side));
    if (order.filled > 0 && this.options.market === 'swap')
      this.held.applyFill(
        { symbol: order.symbol, side: order.side, volume: order.filled, price: order.average ?? 0 },
        closing ? 'reduces' : this.netsPositions ? 'nets' : 'adds',
        Date.now(),
      );
    if (realises) this.refreshAfterFill(order.symbol);
    else this.readFundsBeside(order.symbol);
  }

  /**
   * After an opening fill: the account is read again, but decisions go on with the funds held
   * (the fill changed the wallet by its fee), so a basket's other symbols do not wait for it.
   */
  private readFundsBeside(symbol: string): void {
    if (this.fundsReading) return;
    this.fundsReading = true;
    void this.background(() => this.readFunds(symbol))
      .catch(() => undefined)
      .finally(() => (this.fundsReading = false));
  }

  /**
   * The venue's funds changed by a fill: read again beside the signals; decisions wait for that
   * read. Fills while it is on its way (a basket's) are covered by one more read after it, which
   * decisions wait for too: every read they take began after the last fill. Decisions wait for
   * it, so it is no background read: it does not wait behind the order books' refreshes.
   */
  private refreshAfterFill(symbol?: string): void {
    this.held.forgetFunds();
    if (this.settling !== null) {
      this.settleAgain = true;
      return;
    }
    const refresh = (async () => {
      do {
        this.settleAgain = false;
        await this.readFunds(symbol).catch(() => undefined);
      } while (this.settleAgain);
    })();
    this.settling = refresh;
    void refresh.finally(() => {
      if (this.settling === refresh) this.settling = null;
    });
  }

  async find(order: OrderRequest): Promise<VenueOrder | null> {
    const found = await this.byClientId(order.clientId, order.symbol, false);
    if (found === null) return null;
    const answered = this.report(found, order.kind, order);
    const reported = order.kind === 'market' ? await this.withFills(answered) : answered;
    if (order.kind !== 'market') this.follow(reported);
    else this.feeMustBeKnown(reported);
    return reported;
  }

  async protect(position: VenuePosition, protection: Protection): Promise<VenueOrder[]> {
    // On spot the orders replaced lock the coins the new ones sell (Binance refuses a second sell
    // of them): they are cancelled first, and a refusal of the new ones says so.
    const spot = this.options.market === 'spot';
    if (spot) for (const old of protection.replaces) await this.cancel(old);
    try {
      return await this.placeProtection(position, protection);
    } catch (error) {
      if (!spot || protection.replaces.length === 0 || !(error instanceof VenueRefusedError)) throw error;
      throw new VenueRefusedError(`${error.message}; ${this.freedNote(protection.replaces)}`, {
        cause: error.cause,
        protectionCancelled: true,
      });
    }
  }

  /** Places the stop and targets; elsewhere than on spot, cancels those they replace once they stand. */
  private async placeProtection(position: VenuePosition, protection: Protection): Promise<VenueOrder[]> {
    const side: Side = position.side === 'buy' ? 'sell' : 'buy';
    const placed: VenueOrder[] = [];
    if (protection.stop !== null) {
      const clientId = `${protection.clientId}s`;
      const params = { ...this.closing(), stopLossPrice: protection.stop, clientOrderId: clientId };
      const order = await this.idempotent(
        clientId,
        position.symbol,
        protection.mayExist === true,
        (clientOrderId) =>
          this.exchange.createOrder(position.symbol, 'market', side, position.volume, undefined, {
            ...params,
            clientOrderId,
          }),
        { trigger: true, ended: 'replace' },
      );
      placed.push(
        this.report(
          order,
          'stop_loss',
          { symbol: position.symbol, side, volume: position.volume, price: protection.stop },
          true,
        ),
      );
    }
    let k = 0;
    for (const target of protection.targets) {
      k += 1;
      const clientId = `${protection.clientId}t${k}`;
      const params = { ...this.closing(), clientOrderId: clientId };
      const order = await this.idempotent(
        clientId,
        position.symbol,
        protection.mayExist === true,
        (clientOrderId) =>
          this.exchange.createOrder(position.symbol, 'limit', side, target.volume, target.price, {
            ...params,
            clientOrderId,
          }),
        { ended: 'replace' },
      );
      placed.push(
        this.report(order, 'take_profit', {
          symbol: position.symbol,
          side,
          volume: target.volume,
          price: target.price,
        }),
      );
    }
    for (const order of placed) this.follow(order);
    // The new orders stand: only now are the ones they replace cancelled.
    if (this.options.market !== 'spot') for (const old of protection.replaces) await this.cancel(old);
    return placed;
  }

  /** What a refused spot close says of the stop and targets it cancelled first. */
  private freedNote(freed: readonly VenueOrderRef[]): string {
    return `its stop and targets (orders ${freed.map((o) => o.id).join(', ')}) were cancelled first to free the coins: they are placed again`;
  }

  async close(position: VenuePosition, volume: number, clientId: string, mayExist = false): Promise<VenueOrder> {
    const side: Side = position.side === 'buy' ? 'sell' : 'buy';
    const params = { ...this.closing(), clientOrderId: clientId };
    // On spot the stop or target locks the coins the close sells (Binance refuses the sell with
    // "insufficient balance"): it is cancelled first, and a refused close says so.
    const freed = this.options.market === 'spot' ? position.protection : [];
    for (const held of freed) await this.cancel(held);
    const order = await this.idempotent(
      clientId,
      position.symbol,
      mayExist,
      (clientOrderId) =>
        this.exchange.createOrder(position.symbol, 'market', side, volume, undefined, { ...params, clientOrderId }),
      { ended: 'report' },
    ).catch((error: unknown) => {
      if (!(error instanceof VenueRefusedError) || freed.length === 0) throw error;
      throw new VenueRefusedError(`${error.message}; ${this.freedNote(freed)}`, {
        cause: error.cause,
        protectionCancelled: true,
      });
    });
    const ended = await this.settled(order, position.symbol);
    if (freed.length > 0 && ended.filled === 0 && ended.status !== 'open')
      throw new VenueRefusedError(`the close ended ${ended.status} with nothing sold; ${this.freedNote(freed)}`, {
        protectionCancelled: true,
      });
    const reported = await this.withFills(
      this.report(ended, 'market', {
        symbol: position.symbol,
        side,
        volume,
        price: null,
      }),
    );
    this.filledHere(reported, true);
    return reported;
  }

  /**
   * The order with its fills and their fees, where the exchange's order answer lists none
   * (Binance's): the account's trades of that order, one request. For the ledger only: a read
   * that fails leaves the order as answered, never failing what the exchange filled.
   */
  private async withFills(order: VenueOrder): Promise<VenueOrder> {
    // On spot a buy's fills must cover its lots: they say the fee taken from the coins bought.
    const known = order.fills.length > 0 && (this.options.market !== 'spot' || fillsCover(order));
    if (order.filled <= 0 || known || this.exchange.has['fetchMyTrades'] !== true) return order;
    try {
      const trades = await this.call(`read the trades of order ${order.id}`, () =>
        this.exchange.fetchMyTrades(order.symbol, undefined, undefined, { orderId: order.id }),
      );
      const fills = trades
        .filter((t) => String(t.order) === order.id && typeof t.price === 'number')
        .map((t) => ({
          price: Number(t.price),
          volume: Number(t.amount ?? 0),
          time: t.datetime ?? null,
          fee:
            t.fee && typeof t.fee.cost === 'number'
              ? { cost: t.fee.cost, currency: String(t.fee.currency ?? '') }
              : null,
        }));
      const read = this.withCoinFee({ ...order, fills });
      return read === 'unknown' ? { ...order, fills } : read;
    } catch {
      return order;
    }
  }

  /**
   * A followed order with the fills its stream events told, where they cover its lots filled and
   * its own fills do not: CCXT lists none for an order whose placement event it missed (the
   * stream connected after it), and the look-up's answer (Binance's) lists none, its event
   * arriving meanwhile: the trade list is then not read for fees the exchange already told.
   */
  private withToldFills(id: string, order: VenueOrder): VenueOrder {
    if (order.filled <= 0 || fillsCover(order)) return order;
    const told = this.toldFills.get(id) ?? [];
    // Exactly the lots filled: more would be an event told twice (its fee counted twice), fewer
    // one missed; either way the trade list is read instead.
    const lots = lotsOf(told);
    return told.length > 0 && Math.abs(lots - order.filled) <= order.filled * 1e-9 ? { ...order, fills: told } : order;
  }

  /**
   * An order the exchange filled after it answered its placement (an entry, a stop, a target),
   * with its trades' fees: one read of the trade list, in the background's share of the request
   * budget (it gives way to orders), so the ledger's fees are the exchange's for these fills too.
   */
  private laterFills(order: VenueOrder): Promise<VenueOrder> {
    return this.background(() => this.withFills(order));
  }

  /**
   * Funding payments booked at `since` or later, oldest first, through CCXT's fetchFundingHistory
   * on swap markets of an exchange whose class has it, in the background's share of the request
   * budget. How each exchange answers (fundingRules): Binance USDⓈ-M answers at most `limit`
   * records of a period from its start, so a full page is followed by the next from its last
   * time; Bybit answers a cursor for the next page and 7 days from `startTime` at most, so each
   * cursor is followed and then the next 7 days, up to now.
   */
  async funding(since: number): Promise<LedgerFunding[]> {
    if (this.options.market !== 'swap' || this.exchange.has['fetchFundingHistory'] !== true) return [];
    const rules = fundingRules(this.exchange.id);
    const payments = new Map<string, LedgerFunding>();
    let from = since;
    let cursor: string | undefined;
    for (let page = 0; page < FUNDING_PAGES; page += 1) {
      const until = rules.windowMs === undefined ? undefined : Math.min(from + rules.windowMs, Date.now());
      const params = {
        ...this.kindParams(),
        ...rules.params,
        ...(until !== undefined && { until }),
        ...(cursor !== undefined && { cursor }),
      };
      const records = await this.background(() =>
        this.call('read the funding payments', () =>
          this.exchange.fetchFundingHistory(undefined, from, rules.page, params),
        ),
      );
      for (const record of records) {
        const info = record.info as { tranId?: unknown; symbol?: unknown };
        if (typeof record.timestamp !== 'number' || typeof record.amount !== 'number' || record.symbol === undefined)
          continue;
        // tranIds past 2^53 lose digits in JSON parsing: the market and time keep two payments apart.
        const id = `${String(info.tranId ?? record.id)}:${String(info.symbol)}:${record.timestamp}`;
        payments.set(id, {
          venueFundingId: id,
          symbol: record.symbol,
          amount: rules.paidIsPositive ? -record.amount : record.amount,
          currency: String(record.code ?? this.accountCurrency()),
          at: new Date(record.timestamp).toISOString(),
        });
      }
      cursor = records
        .map((r) => (r.info as { nextPageCursor?: unknown } | undefined)?.nextPageCursor)
        .find((c): c is string => typeof c === 'string' && c !== '');
      if (cursor !== undefined && records.length > 0) continue;
      cursor = undefined;
      if (until !== undefined && until < Date.now() - 1000) {
        from = until;
        continue;
      }
      const last = records.at(-1)?.timestamp;
      if (rules.page === undefined || records.length < rules.page || typeof last !== 'number' || last <= from) break;
      from = last;
    }
    return [...payments.values()].sort((a, b) => Date.parse(a.at) - Date.parse(b.at));
  }

  /** An entry's cancel answers the order as it ended: what filled of it before (Binance's executedQty). */
  async cancel(order: VenueOrderRef): Promise<VenueOrder | void> {
    const followed = this.followed.get(order.id);
    this.unfollow(order.id);
    try {
      const answer = await this.call(`cancel order ${order.id}`, () =>
        this.exchange.cancelOrder(order.id, order.symbol, order.trigger ? this.conditional(order.symbol) : {}),
      );
      if (followed !== undefined && isEntryKind(followed.kind)) {
        const ended = this.report(answer, followed.kind, followed);
        // A spot buy's fee taken from its coins is in its trades (the cancel answer lists none).
        // Unread, the lots filled are kept, and the reconciliation cuts them to the coins held.
        return this.options.market === 'spot' ? await this.withFills(ended) : ended;
      }
    } catch (error) {
      // Gone already (filled, cancelled, or a reduce-only order the exchange dropped with its position).
      if (isGone(error)) return;
      throw error;
    }
  }

  /**
   * What the exchange filled of the orders followed: each is fetched (one request per order per
   * call) and its fill state applied to the order tracker. An entry that filled more is reported
   * with the exchange's lots and average, `working` while its rest stands (the position grows as
   * it fills); one that ended with lots filled (cancelled, expired) is reported for what filled.
   * A stop or target that filled more reduces its position by those lots. An order ended or
   * unknown to the exchange is no longer followed.
   */
  async reports(options: { streamed?: boolean } = {}): Promise<VenueReport[]> {
    const reports: VenueReport[] = [];
    for (const report of this.filledAtOnce.splice(0)) {
      if (report.type !== 'entry_filled') {
        reports.push(report);
        continue;
      }
      const order = await this.laterFills(report.order);
      // A spot buy's fee unknown (its trades unread): reported at the next call, once they are read.
      if (this.withCoinFee(order) === 'unknown') {
        this.filledAtOnce.push(report);
        this.unreported.set(order.id, order);
        continue;
      }
      this.unreported.delete(order.id);
      reports.push(this.entryFilled({ ...report, order }));
    }
    const streamed = this.streamed;
    this.streamed = new Map();
    for (const [id, followed] of [...this.followed]) {
      const told = streamed.get(id);
      if (options.streamed === true && told === undefined) continue;
      const order = told !== undefined && told !== 'look-up' ? told : await this.lookUp(followed);
      if (order === null) {
        this.endedUnseen(id, 0);
        this.unfollow(id);
        continue;
      }
      const seen = this.withToldFills(id, this.report(order, followed.kind, followed));
      // The exchange's own id and kind stay: the book knows the order by them.
      const now = {
        ...seen,
        id: followed.id,
        kind: followed.kind,
        ...(followed.trigger && { trigger: true }),
      };
      const step = applyToTracker(this.tracker, id, updateOf(order));
      const entry = isEntryKind(followed.kind);
      const filledMore = step.effects.some((e) =>
        entry ? e.type === 'entry_fill' || (e.type === 'ended' && e.order.filled > 0) : e.type === 'exit_fill',
      );
      // Its fees, for the ledger: read by the order that filled (a triggered stop's own, not its algo id).
      if (filledMore) {
        const read = await this.laterFills(seen);
        // A spot buy's fee unknown (its trades unread): the order stays followed as it was, and
        // its fill is reported at the next call, once they are read.
        if (entry && this.withCoinFee(read) === 'unknown') {
          this.unreported.set(id, followed);
          continue;
        }
        this.unreported.delete(id);
        now.fills = read.fills;
        if (read.feeInCoin !== undefined) now.feeInCoin = read.feeInCoin;
      }
      this.tracker = step.tracker;
      if (now.status !== 'open') {
        this.endedUnseen(id, now.status === 'filled' ? 'whole' : Math.max(0, now.filled));
        this.unfollow(id);
      }
      if (entry) {
        if (filledMore)
          reports.push(
            this.entryFilled({ type: 'entry_filled', order: now, ...(now.status === 'open' && { working: true }) }),
          );
        continue;
      }
      for (const effect of step.effects) {
        if (effect.type !== 'exit_fill') continue;
        reports.push({
          type: 'position_reduced',
          symbol: followed.symbol,
          side: followed.side === 'buy' ? 'sell' : 'buy',
          volume: effect.lots,
          price: effect.price,
          by: followed.kind === 'stop_loss' ? 'stop_loss' : 'take_profit',
          order: now,
        });
      }
    }
    if (reports.length > 0) this.refreshAfterFill();
    return reports;
  }

  /**
   * The book's stops and targets not open at the exchange are followed as if placed in this run:
   * the next reports fetch each by its id (Binance keeps ended orders queryable; a USDⓈ-M stop by
   * its algo order, then the order it placed), and a fill is reported as any exit's, with its
   * trades' fees; one cancelled, expired or unknown to the exchange ends there, reporting nothing.
   * On spot the coins cannot tell a filled stop from a cancelled one where the trader holds more of
   * the coin than the book; on swaps the position gone tells only that it closed, not at what price.
   */
  followEnded(orders: EndedExit[]): void {
    // Found ended once, an order cannot fill again: not looked up each pass while the book holds
    // it (until its stop and targets are placed again, or its position leaves), then forgotten.
    const handed = new Set(orders.map((o) => o.id));
    this.foundEnded = new Map([...this.foundEnded].filter(([id]) => handed.has(id)));
    for (const order of orders) {
      if (this.followed.has(order.id) || this.foundEnded.has(order.id)) continue;
      this.endedLookUps.add(order.id);
      this.followed.set(order.id, {
        id: order.id,
        clientId: null,
        symbol: order.symbol,
        side: order.side,
        kind: order.kind,
        volume: 0,
        price: null,
        status: 'open',
        filled: order.filled,
        average: null,
        fills: [],
        ...(order.trigger === true && { trigger: true }),
      });
      this.tracker = track(this.tracker, {
        clientId: null,
        venueId: order.id,
        role: order.kind === 'stop_loss' ? 'stop' : 'target',
        symbol: order.symbol,
        volume: 0,
        filled: order.filled,
        average: null,
        status: 'open',
      });
    }
  }

  /**
   * The orders found ended with nothing filled (cancelled, expired, unknown: Binance forgets
   * those after some days, -2013): gone for certain, where a swap's stop missing from the open
   * orders alone is not. A stop that filled in part is not among them (see `endedInPart`).
   */
  endedUnfilled(): ReadonlySet<string> {
    return new Set([...this.foundEnded].filter(([, filled]) => filled === 0).map(([id]) => id));
  }

  /**
   * The orders found ended (cancelled, expired) after filling part, that part reported already:
   * gone for certain too, where the book still names one (its stop for the rest refused).
   */
  endedInPart(): ReadonlyMap<string, number> {
    const part = [...this.foundEnded].filter((e): e is [string, number] => e[1] !== 'whole' && e[1] > 0);
    return new Map(part);
  }

  /** An entry's fill as reported, said once in the log where the exchange took its fee from the coins bought. */
  private entryFilled(report: Extract<VenueReport, { type: 'entry_filled' }>): VenueReport {
    const fee = report.order.feeInCoin;
    if (fee !== undefined && report.working !== true)
      this.options.log?.info(
        { order: report.order.id, symbol: report.order.symbol, filled: report.order.filled, ...fee },
        coinFeeNote(this.name, report.order),
      );
    return report;
  }

  /**
   * An order as the exchange has it now, or null when it has none. A conditional order that
   * triggered (Binance: its algo order FINISHED) is answered with the fill of the order it
   * placed in the matching engine (`actualOrderId`), which carries the lots and the price.
   */
  private async lookUp(followed: VenueOrder): Promise<Order | null> {
    const fetch = async (id: string, params: Record<string, unknown>): Promise<Order | null> => {
      try {
        return await this.call(`fetch order ${id}`, () =>
          this.exchange.fetchOrder(id, followed.symbol, { ...this.lookUpParams(), ...params }),
        );
      } catch (error) {
        if (isGone(error)) return null;
        throw error;
      }
    };
    const order = await fetch(followed.id, followed.trigger ? this.conditional(followed.symbol) : {});
    const actual = (order?.info as { actualOrderId?: unknown } | undefined)?.actualOrderId;
    if (
      order === null ||
      order.status === 'open' ||
      (typeof actual !== 'string' && typeof actual !== 'number') ||
      String(actual) === ''
    )
      return order;
    return (await fetch(String(actual), {})) ?? order;
  }

  /**
   * A market order as filled: when the exchange's answer to its placement does not say what
   * filled (Bybit answers only the order's ids), the order is read back, a few times while the
   * exchange still reports it open, so the fill is the exchange's and never the agent's quote.
   */
  private async settled(order: Order, symbol: string): Promise<Order> {
    let now = order;
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const known = typeof now.average === 'number' && Number(now.filled ?? 0) > 0;
      if (known || now.status === 'canceled' || now.status === 'expired' || now.status === 'rejected') return now;
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
      const id = String(order.id ?? '');
      if (id === '') return now;
      const read = await this.call(`fetch order ${id}`, () =>
        this.exchange.fetchOrder(id, symbol, this.lookUpParams()),
      );
      now = { ...read, clientOrderId: read.clientOrderId ?? order.clientOrderId };
    }
    return now;
  }

  /**
   * What order look-ups need: Bybit's fetchOrder reads its last 500 orders only and refuses
   * (ArgumentsRequired) unless told that is understood; the agent looks up recent orders.
   */
  private lookUpParams(): Record<string, unknown> {
    return this.exchange.id === 'bybit' ? { acknowledged: true } : {};
  }

  /**
   * An order followed until it ends. An entry counts nothing filled yet, so lots it filled as it
   * was placed are reported at the next call (one ended at once is reported without a read); a
   * stop or target counts what filled before as reported already.
   */
  private follow(order: VenueOrder): void {
    const entry = isEntryKind(order.kind);
    if (entry && order.status !== 'open') {
      if (order.filled > 0) this.filledAtOnce.push({ type: 'entry_filled', order });
      return;
    }
    if (order.status !== 'open') return;
    this.followed.set(order.id, order);
    this.tracker = track(this.tracker, {
      clientId: order.clientId,
      venueId: order.id,
      role: entry ? 'entry' : order.kind === 'stop_loss' ? 'stop' : 'target',
      symbol: order.symbol,
      volume: order.volume,
      filled: entry ? 0 : order.filled,
      average: entry ? null : order.average,
      status: 'open',
    });
  }

  /** An order `followEnded` handed over, found ended or unknown to the exchange: not looked up again while the book holds it. */
  private endedUnseen(id: string, filled: number | 'whole'): void {
    if (this.endedLookUps.has(id)) this.foundEnded.set(id, filled);
  }

  private unfollow(id: string): void {
    this.followed.delete(id);
    this.toldFills.delete(id);
    this.endedLookUps.delete(id);
    this.unreported.delete(id);
    this.tracker = untrack(this.tracker, id);
  }

  async shutdown(): Promise<void> {
    this.stream?.stop();
    if (this.quoteTimer !== null) clearInterval(this.quoteTimer);
    this.quoteTimer = null;
    await this.exchange.close?.();
  }

  private market(symbol: string): Market | null {
    const market = this.exchange.markets?.[symbol];
    return market ?? null;
  }

  /** Calls without a symbol say which markets they mean: CCXT would otherwise take the exchange's default (Binance: spot). */
  private kindParams(): Record<string, unknown> {
    return this.options.market === 'swap' ? { type: 'swap', subType: 'linear' } : { type: 'spot' };
  }

  /**
   * What tells CCXT that a cancel is of a conditional order. Binance keeps those apart (its
   * algo-order endpoint); Bybit cancels them on the plain endpoint for contracts, where CCXT
   * would pass `trigger` through to Bybit as an unknown field.
   */
  private conditional(symbol: string): Record<string, unknown> {
    if (this.exchange.id === 'bybit' && this.market(symbol)?.contract === true) return {};
    return { trigger: true };
  }

  /** Whether open conditional orders are listed apart from the plain ones (Binance; Bybit lists them together on contracts). */
  private keepsConditionalApart(): boolean {
    if (this.exchange.id === 'bybit') return this.options.market !== 'swap';
    return (this.exchange.id === 'binance' && this.options.market === 'swap') || this.exchange.id === 'binanceusdm';
  }

  /** Opening orders in hedge mode open the position of their own side. */
  private opening(): Record<string, unknown> {
    return this.options.market === 'swap' && this.options.positionMode === 'hedge' ? { hedged: true } : {};
  }

  /** Closing orders only reduce (on contract markets); in hedge mode they name the position's side. */
  private closing(): Record<string, unknown> {
    if (this.options.market !== 'swap') return {};
    // CCXT turns `hedged` into the exchange's own field (Binance positionSide, Bybit positionIdx).
    return this.options.positionMode === 'hedge' ? { hedged: true, reduceOnly: true } : { reduceOnly: true };
  }

  /** The open positions (swap markets; none on spot) and their unrealized profit (of the markets settled in `currency`, when given). */
  private async positionsAndProfit(currency?: string): Promise<{ positions: VenuePosition[]; unrealized: number }> {
    if (this.options.market !== 'swap') return { positions: [], unrealized: 0 };
    const open = (
      await this.call('fetch the positions', () => this.exchange.fetchPositions(undefined, this.kindParams()))
    ).filter((p) => Number(p.contracts ?? 0) > 0 && typeof p.symbol === 'string');
    const counted =
      currency === undefined ? open : open.filter((p) => this.market(p.symbol as string)?.settle === currency);
    return {
      positions: open.map((p) => ({
        id: `${p.symbol}:${p.side === 'short' ? 'sell' : 'buy'}`,
        symbol: p.symbol as string,
        side: p.side === 'short' ? ('sell' as const) : ('buy' as const),
        volume: Number(p.contracts ?? 0),
        price: Number(p.entryPrice ?? 0),
        protection: [],
      })),
      unrealized: counted.reduce((sum, p) => sum + Number(p.unrealizedPnl ?? 0), 0),
    };
  }

  private async openOrders(): Promise<VenueOrder[]> {
    // Without a symbol some exchanges (Binance) charge a heavy rate-limit weight and warn; the
    // option acknowledges it: the agent asks once on start and for the published state.
    this.exchange.options.warnOnFetchOpenOrdersWithoutSymbol = false;
    // Bybit answers 20 orders a page unless asked (at most 50): CCXT follows its cursor then.
    const pages = this.exchange.id === 'bybit' ? { paginate: true } : {};
    const plain = await this.call('fetch the open orders', () =>
      this.exchange.fetchOpenOrders(undefined, undefined, undefined, { ...this.kindParams(), ...pages }),
    );
    // Where the exchange keeps conditional orders apart (Binance USDⓈ-M: the Algo Service), they
    // are listed apart too: a stop must never be invisible to the reconciliation.
    const apart = this.keepsConditionalApart();
    const conditional = apart
      ? await this.call('fetch the open conditional orders', () =>
          this.exchange.fetchOpenOrders(undefined, undefined, undefined, { ...this.kindParams(), trigger: true }),
        )
      : [];
    const seen = new Set(plain.map((o) => String(o.id)));
    const orders = [...plain, ...conditional.filter((o) => !seen.has(String(o.id)))];
    return orders.map((o) =>
      this.report(o, kindOf(o), {
        symbol: o.symbol ?? '',
        side: o.side === 'sell' ? 'sell' : 'buy',
        volume: Number(o.amount ?? 0),
        price: o.triggerPrice ?? o.price ?? null,
      }),
    );
  }

  /**
   * Places an order once. When it may exist already (the signal is executed again) its client
   * id is looked up first: an exchange may accept a client id again once its order is filled,
   * so the duplicate refusal alone cannot be relied on. And when the exchange refuses the id as
   * a duplicate anyway, the existing order is fetched and answered.
   */
  /**
   * Places an order under `clientId`, or, where it may stand already (`mayExist`: a retry, a
   * restart), takes the one found by that client id. An order found ended without a lot
   * (cancelled, expired, rejected: by hand, by the exchange, by a move) is not placed:
   * - `ended: 'replace'` (a stop or target, which must stand while its position does): placed
   *   again under the next client id of a chain (`…x1`, `…x2`), each looked up first, so a
   *   restart finds the replacement and never places a third;
   * - `ended: 'report'` (an entry or a close): answered as found, and the caller reports the
   *   order's end (an entry that filled nothing is the venue's refusal, with its status).
   */
  private async idempotent(
    clientId: string,
    symbol: string,
    mayExist: boolean,
    create: (clientId: string) => Promise<Order>,
    options: { trigger?: boolean; ended?: 'replace' | 'report' } = {},
  ): Promise<Order> {
    const trigger = options.trigger === true;
    for (let n = 0; ; n += 1) {
      const id = n === 0 ? clientId : `${clientId}x${n}`;
      const found = mayExist || n > 0 ? await this.byClientId(id, symbol, trigger) : null;
      if (found !== null) {
        if (options.ended !== 'replace' || !endedEmpty(found)) return found;
        if (n >= MAX_REPLACEMENTS)
          throw new VenueRefusedError(
            `${this.options.exchange} ended the order ${id} (${found.status}) and the ${MAX_REPLACEMENTS} placed after it; it is not placed again`,
          );
        continue;
      }
      try {
        return await this.call('place the order', () => create(id));
      } catch (error) {
        // Binance USDⓈ-M says -4116 "ClientOrderId is duplicated." and Bybit 110072 "OrderLinkedID
        // is duplicate", both of which CCXT makes an InvalidOrder.
        const duplicate =
          error instanceof VenueRefusedError &&
          (error.cause instanceof ccxt.DuplicateOrderId ||
            /"code":\s*-4116\b|"retCode":\s*110072\b/.test(error.message));
        if (!duplicate) throw error;
        const again = await this.byClientId(id, symbol, trigger);
        if (again === null) throw error;
        if (options.ended === 'replace' && endedEmpty(again)) continue;
        return again;
      }
    }
  }

  /**
   * The order with this client id, or null when the exchange has none. `trigger`: a conditional
   * order (a stop), which some exchanges keep apart (Binance USDⓈ-M: the algo-order endpoint).
   */
  private async byClientId(clientId: string, symbol: string, trigger = false): Promise<Order | null> {
    try {
      return await this.call(`fetch order ${clientId}`, () =>
        this.exchange.fetchOrder('', symbol, {
          ...this.lookUpParams(),
          ...this.byClientIdParam(clientId),
          ...(trigger && this.conditional(symbol)),
        }),
      );
    } catch (error) {
      if (isGone(error)) return null;
      throw error;
    }
  }

  /**
   * How a look-up names the client id. CCXT's Bybit fetchOrder passes `clientOrderId` through as
   * a field Bybit does not know, with `orderId` empty, and Bybit then answers the symbol's newest
   * order, whichever it is: Bybit's own field is `orderLinkId`.
   */
  private byClientIdParam(clientId: string): Record<string, unknown> {
    return this.exchange.id === 'bybit' ? { orderLinkId: clientId } : { clientOrderId: clientId };
  }

  /** Runs a CCXT call; its errors become the venue's two kinds (refused, unreachable). */
  private async call<T>(what: string, action: () => Promise<T>): Promise<T> {
    try {
      return await action();
    } catch (error) {
      if (error instanceof ccxt.OperationFailed) {
        throw new VenueUnreachableError(
          `${this.options.exchange} did not answer when asked to ${what}: ${(error as Error).message}`,
          { cause: error },
        );
      }
      if (error instanceof ccxt.BaseError) throw new VenueRefusedError((error as Error).message, { cause: error });
      throw error;
    }
  }

  private report(
    order: Order,
    kind: VenueOrder['kind'],
    asked: { symbol: string; side: Side; volume: number; price: number | null },
    conditional = false,
  ): VenueOrder {
    const filled = Number(order.filled ?? 0);
    const trades = (order.trades ?? []).filter((t) => typeof t.price === 'number');
    const reported: VenueOrder = {
      id: String(order.id),
      clientId: order.clientOrderId ?? null,
      symbol: order.symbol ?? asked.symbol,
      side: (order.side as Side | undefined) ?? asked.side,
      kind,
      volume: Number(order.amount ?? asked.volume),
      price: order.triggerPrice ?? order.price ?? asked.price,
      status: orderStatusOf(updateOf(order).status),
      filled,
      average: typeof order.average === 'number' ? order.average : null,
      fills: trades.map((t) => ({
        price: Number(t.price),
        volume: Number(t.amount ?? 0),
        time: t.datetime ?? null,
        fee:
          t.fee && typeof t.fee.cost === 'number' ? { cost: t.fee.cost, currency: String(t.fee.currency ?? '') } : null,
      })),
      // Stops are conditional orders, which some exchanges (Binance) keep and cancel apart.
      ...(conditional ||
      kind === 'stop_loss' ||
      kind === 'stop' ||
      (order.triggerPrice !== undefined && order.triggerPrice !== null)
        ? { trigger: true }
        : {}),
    };
    const net = this.withCoinFee(reported);
    return net === 'unknown' ? reported : net;
  }
}

/** The lots the fills add up to. */
function lotsOf(fills: readonly VenueFill[]): number {
  return fills.reduce((sum, fill) => sum + fill.volume, 0);
}

/** Whether the order's own fills account for every lot it filled (floating-point noise aside). */
function fillsCover(order: VenueOrder): boolean {
  return order.fills.length > 0 && lotsOf(order.fills) >= order.filled * (1 - 1e-9);
}

/**
 * The exchange's websockets through `--proxy-url` as its requests go (CCXT's proxyUrl covers
 * HTTP only): each connection opens `<proxy URL as ws:, or wss: for https:><the exchange's wss
 * URL>`, e.g. `ws://127.0.0.1:8080/wss://fstream.binance.com/private/ws?listenKey=…`. CCXT
 * keys its connections by URL, so every look-up of one (`client`, `watch`) is given the proxied URL.
 */
function proxyStreams(exchange: Exchange, proxyUrl: string): void {
  const prefix = proxyUrl.replace(/^http(s?):/i, 'ws$1:');
  // CCXT opens a plain ws:// URL only with an HTTP agent of the caller's.
  if (prefix.startsWith('ws:')) exchange.httpAgent = new HttpAgent({ keepAlive: true });
  const proxied = (url: string) => (url.startsWith(prefix) ? url : `${prefix}${url}`);
  const client = exchange.client.bind(exchange);
  exchange.client = ((url: string) => client(proxied(url))) as Exchange['client'];
  // watch() also looks the URL up among its connections (a new one counts towards CCXT's backoff).
  const watch = exchange.watch.bind(exchange);
  exchange.watch = ((url: string, ...rest: Parameters<Exchange['watch']> extends [unknown, ...infer R] ? R : never) =>
    watch(proxied(url), ...rest)) as Exchange['watch'];
  const watchMultiple = exchange.watchMultiple.bind(exchange);
  exchange.watchMultiple = ((
    url: string,
    ...rest: Parameters<Exchange['watchMultiple']> extends [unknown, ...infer R] ? R : never
  ) => watchMultiple(proxied(url), ...rest)) as Exchange['watchMultiple'];
}

/** The quoting key of the one read of every watched symbol's best bid and ask. */
const ALL_BOOKS = '*';
/** Signals of different symbols at once per CCXT agent (the agent's default is 16). */
const CONCURRENT_SIGNALS = 64;

/** Pages of funding records read at most in one call. */
const FUNDING_PAGES = 10;

/**
 * How an exchange answers CCXT's fetchFundingHistory. `page`: the records asked for at once
 * (Binance's most is 1000; Bybit's 100, sent as its own `limit`, since CCXT sends a `size` that
 * Bybit's execution list does not take and answers its default 50). `windowMs`: the longest
 * period one request answers (Bybit: 7 days from startTime). `paidIsPositive`: the amount is
 * what the position paid (Bybit's execFee, a fee), where the ledger counts what it received.
 */
function fundingRules(exchange: string): {
  page: number | undefined;
  params: Record<string, unknown>;
  windowMs?: number;
  paidIsPositive: boolean;
} {
  if (exchange === 'bybit')
    return { page: 100, params: { limit: 100 }, windowMs: 7 * 24 * 3600 * 1000, paidIsPositive: true };
  if (exchange === 'binance' || exchange === 'binanceusdm') return { page: 1000, params: {}, paidIsPositive: false };
  return { page: undefined, params: {}, paidIsPositive: false };
}

/** How often a stop or target found ended is placed again under a new client id before it is the venue's refusal. */
const MAX_REPLACEMENTS = 9;

/** An order that ended with nothing filled: cancelled, expired or rejected (CCXT spells cancelled `canceled`). */
function endedEmpty(order: Order): boolean {
  return (
    ['canceled', 'cancelled', 'expired', 'rejected'].includes(String(order.status)) && !(Number(order.filled ?? 0) > 0)
  );
}

/**
 * CCXT's Binance loads spot, USDⓈ-M and COIN-M markets, and with keys the wallet's coins and
 * the margin pairs, before anything else: heavy requests, and wallet and margin permissions,
 * for what the agent never trades. It loads only the kind it trades (USDⓈ-M for swap; inverse
 * markets are refused anyway), and neither coins nor margin pairs. CCXT's Bybit loads spot,
 * linear, inverse and three option families (and the coins, see the constructor): only the
 * linear or the spot markets are loaded.
 */
function onlyWhatIsTraded(exchange: string, market: MarketKind): Record<string, unknown> {
  if (exchange === 'bybit') return { fetchMarkets: { types: [market === 'swap' ? 'linear' : 'spot'] } };
  if (exchange !== 'binance' && exchange !== 'binanceusdm') return {};
  return {
    fetchMarkets: { types: [market === 'swap' || exchange === 'binanceusdm' ? 'linear' : 'spot'] },
    fetchMargins: false,
    fetchCurrencies: false,
  };
}

/** An order the exchange no longer has, or no longer has open: not found (-2013), or a cancel of one not open (Binance -2011). */
function isGone(error: unknown): boolean {
  if (!(error instanceof VenueRefusedError)) return false;
  return error.cause instanceof ccxt.OrderNotFound || /"code":\s*-2011\b/.test(error.message);
}

/**
 * Binance futures' balance of one asset: `walletBalance` and `marginBalance` (the wallet plus
 * unrealized profit), from the account answer CCXT keeps in `info`. Null elsewhere.
 */
function binanceAsset(info: unknown, currency: string): { wallet: number; margin: number } | null {
  const assets = (info as { assets?: unknown } | null)?.assets;
  if (!Array.isArray(assets)) return null;
  const asset = assets.find((a) => (a as { asset?: unknown }).asset === currency) as
    { walletBalance?: unknown; marginBalance?: unknown } | undefined;
  if (asset === undefined)
    return assets.length > 0 && typeof (assets[0] as { walletBalance?: unknown }).walletBalance === 'string'
      ? { wallet: 0, margin: 0 }
      : null;
  const wallet = Number(asset.walletBalance);
  const margin = Number(asset.marginBalance);
  return Number.isFinite(wallet) && Number.isFinite(margin) ? { wallet, margin } : null;
}

/** A CCXT order's fill state in the order tracker's words (CCXT's `filled` and `average` are cumulative). */
function updateOf(order: Order): OrderUpdate {
  const filled = Number(order.filled ?? 0);
  const status: OrderUpdate['status'] =
    order.status === 'closed'
      ? 'filled'
      : order.status === 'canceled'
        ? 'cancelled'
        : order.status === 'expired'
          ? 'expired'
          : order.status === 'rejected'
            ? 'rejected'
            : filled > 0
              ? 'partially_filled'
              : 'new';
  return { status, filled, average: typeof order.average === 'number' ? order.average : null, last: null };
}

function isEntryKind(kind: VenueOrder['kind']): boolean {
  return kind === 'limit' || kind === 'stop';
}

function kindOf(order: Order): VenueOrder['kind'] {
  if (order.stopLossPrice !== undefined && order.stopLossPrice !== null) return 'stop_loss';
  if (order.takeProfitPrice !== undefined && order.takeProfitPrice !== null) return 'take_profit';
  if (order.reduceOnly) return order.triggerPrice ? 'stop_loss' : 'take_profit';
  return order.type === 'limit' ? 'limit' : order.triggerPrice ? 'stop' : 'market';
}
