import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'pino';
import { writeFileAtomicSync } from '../../../files/atomic-file.js';
import {
  defaultInstrument,
  type FillRules,
  type InstrumentSpec,
  type Quote,
  type Side,
} from '../../../engine/index.js';
import {
  VenueRefusedError,
  VenueUnreachableError,
  type OrderRequest,
  type Protection,
  type Venue,
  type VenueAccount,
  type VenueFunds,
  type VenueHoldings,
  type VenueOrder,
  type VenueOrderRef,
  type VenuePosition,
  type VenueReport,
} from '../../venue.js';
import type { FixConfig, FixCredentials } from './fix-config.js';
import { ctraderDictionary } from './fix-dictionary.js';
import { FixLink, type FixMessage } from './fix-link.js';
import { applyUpdate, type OrderUpdate } from '../../order-tracker.js';

/** How long an order's first ExecutionReport may take before the broker counts as unreachable. */
const ANSWER_MS = 10_000;
const LOGON_MS = 20_000;
/** How long the start waits for the answer to an OrderStatusRequest (plain FIX 4.4). */
const STATUS_MS = 5_000;
/** How long a market data refusal stands before the quote is asked for again. */
const QUOTE_RETRY_MS = 60_000;

export interface FixVenueOptions {
  config: FixConfig;
  credentials: FixCredentials | null;
  /** Sequence numbers and the orders record live here (under the agent's data dir). */
  storeDir: string;
  log: Logger;
}

interface TrackedOrder extends Omit<VenueOrder, 'positionId'> {
  /** cTrader's position id (721) the order opened or closes, when the broker gives one. */
  positionId: string | null;
  /** A pending entry's lots already reported as its position (set at its first partial fill). */
  reported?: number;
  /**
   * The agent took that report and wrote its book (it asked for reports again after it): a
   * report not taken when the agent stopped is given again at the next start.
   */
  taken?: boolean;
  /**
   * place() handed this entry to the agent, so its book can hold it. An entry sent by an agent
   * killed before the answer is not: its fill (resent by the broker at the restart, before the
   * signal is executed again) waits until place() hands it over, else the book would drop it.
   */
  handed?: boolean;
  /** The order's filled lots after each of its fills, by the fill's ExecID: a bust names one (ExecRefID). */
  execFilled?: Record<string, number>;
  /** Lots taken back so far, by the ExecID of the fill the busts named. */
  execBusted?: Record<string, number>;
}

type Answer = { order: TrackedOrder } | { refused: string };

/**
 * A FIX 4.4 broker: orders are NewOrderSingle (market, limit, stop) with the signal's client
 * order id as ClOrdID, their ExecutionReports the orders' states and fills; cancels are
 * OrderCancelRequest; quotes come from a MarketDataRequest subscription (on the quote session
 * where the broker has one). Stops and targets are stop and limit orders of the other side held
 * by the broker. The broker's refusals (ExecutionReport rejected, session Reject, Business
 * Message Reject, Order Cancel Reject) carry its text into the signal's outcome.
 */
export class FixVenue implements Venue {
  readonly name: string;
  readonly netsPositions = false;
  /**
   * The broker fills its own orders and says so by ExecutionReport: an entry's report (with
   * cTrader's position id, 721) makes the position; a stop's or target's report closes its lots.
   */
  readonly fills: FillRules = { entries: 'venue', exits: 'venue' };
  private readonly trade: FixLink;
  private readonly quotes: FixLink;
  private readonly orders = new Map<string, TrackedOrder>();
  private readonly execIds = new Set<string>();
  private readonly waiting = new Map<string, { until: (o: TrackedOrder) => boolean; resolve: (a: Answer) => void }>();
  private readonly pendingReports: VenueReport[] = [];
  /** Entries whose fill the last `reports()` handed out: taken at the next call. */
  private handedOut: string[] = [];
  /** Cancels of partly filled entries' rests in flight, by the entry's client id. */
  private readonly restCancels = new Map<string, Promise<void>>();
  private readonly prices = new Map<string, { bid: number | null; ask: number | null; time: number }>();
  private readonly quoteWaiters = new Map<string, Array<(error: string | null) => void>>();
  private readonly subscribed = new Set<string>();
  /**
   * Symbols whose market data the broker refused (MarketDataRequestReject, or a session or
   * business Reject of the request), with its reason: published, and a quote of them refused at
   * once instead of waiting. Asked again after QUOTE_RETRY_MS or at the next logon.
   */
  private readonly quotesRefused = new Map<string, { reason: string; since: string; at: number }>();
  private readonly requests = new Map<string, (type: string, message: FixMessage) => boolean>();
  private readonly recordFile: string;
  private tradeLogons = 0;

  constructor(private readonly options: FixVenueOptions) {
    const { config } = options;
    this.name = `fix:${config.trade.targetCompId}`;
    this.recordFile = path.join(options.storeDir, 'orders.json');
    const listener = (link: 'trade' | 'quote') => ({
      received: (type: string, message: FixMessage) => this.received(type, message, link),
      loggedOn: () => {
        // cTrader resends nothing after a logon (sequence numbers reset): what the broker did
        // while the session was down is asked for after every logon but the start's, which open() asks.
        if (link === 'trade' && config.dialect === 'ctrader') {
          if (this.tradeLogons++ > 0) void this.statusAfterLogon();
        }
        if (link !== (config.quote ? 'quote' : 'trade')) return;
        // A new logon is a new chance: the broker may give the quotes it refused.
        this.quotesRefused.clear();
        for (const symbol of this.subscribed) this.subscribe(symbol);
      },
      lost: () => undefined,
    });
    const dictionary = config.dialect === 'ctrader' ? ctraderDictionary(options.storeDir) : 'qf44';
    this.trade = new FixLink(
      'trade',
      config.trade,
      options.credentials,
      path.join(options.storeDir, 'trade'),
      options.log,
      listener('trade'),
      dictionary,
    );
    this.quotes = config.quote
      ? new FixLink(
          'quote',
          config.quote,
          options.credentials,
          path.join(options.storeDir, 'quote'),
          options.log,
          listener('quote'),
          dictionary,
        )
      : this.trade;
  }

  async open(): Promise<VenueHoldings> {
    this.loadRecord();
    // An entry fill reported before the agent stopped, and perhaps not in its book: again.
    for (const order of this.orders.values()) {
      if (isEntry(order) && order.reported !== undefined && !order.taken && order.handed !== false)
        this.reportEntry(order);
    }
    this.trade.start();
    if (this.quotes !== this.trade) this.quotes.start();
    if (!(await this.trade.ready(LOGON_MS)))
      throw new VenueUnreachableError(this.trade.lastError ?? 'the FIX trade session did not log on');
    let holdings: VenueHoldings;
    if (this.options.config.dialect === 'ctrader') {
      // The mass status's reports also tell the fills made while the agent was away (CumQty).
      const [positions, orders] = await Promise.all([this.requestPositions(), this.requestOrders()]);
      holdings = { positions, orders };
    } else {
      // Plain FIX 4.4: the broker resends the ExecutionReports missed while away (the sequence
      // numbers are kept on disk), where it does; and each order the record holds as unfinished
      // is asked for by OrderStatusRequest, since a broker that resets its sequence numbers or
      // gap-fills its resend loses those reports. The record with the answers is what it holds.
      await this.askOrderStatus();
      holdings = { positions: null, orders: this.openOrders() };
    }
    // A partly filled entry's rest still working (its cancel lost when the agent stopped, or
    // the fill made while it was away): cancelled before the agent takes up its book.
    for (const order of this.orders.values())
      if (isEntry(order) && order.reported !== undefined && order.status === 'open' && order.id !== '')
        this.cancelRest(order);
    await Promise.all(this.restCancels.values());
    return {
      ...holdings,
      orders: holdings.orders.filter((o) => this.orders.get(o.clientId ?? '')?.status !== 'cancelled'),
    };
  }

  async account(): Promise<VenueAccount> {
    // cTrader lists positions and orders; plain FIX 4.4 has no positions, and its orders are the record's.
    if (this.options.config.dialect === 'ctrader') {
      const [funds, positions, orders] = await Promise.all([
        this.funds(),
        this.requestPositions(),
        this.requestOrders(),
      ]);
      return { ...funds, positions, orders };
    }
    return { ...(await this.funds()), positions: null, orders: this.openOrders() };
  }

  async funds(): Promise<VenueFunds> {
    const { balance, currency } = this.options.config.account;
    return { balance, equity: balance, currency };
  }

  instrument(symbol: string): InstrumentSpec | null {
    for (const [canonical, spec] of Object.entries(this.options.config.instruments)) {
      if (spec.brokerSymbol === symbol)
        return {
          symbol: canonical,
          pipSize: pipSizeOf(canonical, spec.digits),
          digits: spec.digits,
          contractSize: spec.contractSize,
          lotMin: spec.lotMin,
          lotStep: spec.lotStep,
          lotMax: spec.lotMax,
          quoteCurrency: spec.quoteCurrency,
        };
    }
    return defaultInstrument(symbol);
  }

  findSymbol(signalSymbol: string): string | null {
    const configured = this.options.config.instruments[signalSymbol.toUpperCase()];
    if (configured) return configured.brokerSymbol;
    return defaultInstrument(signalSymbol) ? signalSymbol.toUpperCase() : null;
  }

  async quote(symbol: string): Promise<Quote> {
    if (!this.quotes.loggedOn)
      throw new VenueUnreachableError(this.quotes.lastError ?? `the FIX ${this.quotes.name} session is not logged on`);
    const have = this.prices.get(symbol);
    if (have?.bid != null && have.ask != null) return { bid: have.bid, ask: have.ask };
    const refused = this.quotesRefused.get(symbol);
    if (refused && Date.now() - refused.at < QUOTE_RETRY_MS) throw new VenueRefusedError(refused.reason);
    const error = await new Promise<string | null>((resolve) => {
      const timer = setTimeout(() => resolve('timeout'), ANSWER_MS);
      const list = this.quoteWaiters.get(symbol) ?? [];
      list.push((e) => {
        clearTimeout(timer);
        resolve(e);
      });
      this.quoteWaiters.set(symbol, list);
      if (!this.subscribed.has(symbol)) {
        this.subscribed.add(symbol);
        this.subscribe(symbol);
      }
    });
    if (error === 'timeout')
      throw new VenueUnreachableError(`no quote for ${symbol} within ${ANSWER_MS / 1000} s of the MarketDataRequest`);
    if (error !== null) throw new VenueRefusedError(error);
    const got = this.prices.get(symbol)!;
    return { bid: got.bid!, ask: got.ask! };
  }

  async place(order: OrderRequest): Promise<VenueOrder> {
    let known =
      this.answered(order.clientId) ??
      (order.mayExist ? await this.lookUp(order.clientId, order.symbol, order.side) : undefined);
    const unanswered = this.orders.get(order.clientId);
    if (!known && order.mayExist && unanswered?.id === '' && this.options.config.dialect === 'ctrader')
      known = this.openedWhileAway(unanswered, await this.requestPositions());
    if (known) {
      // The agent's book takes the order now: a fill learnt before (its report held back, or
      // handed out and dropped by a book that did not hold the order yet) is reported again.
      if (isEntry(known)) {
        known.handed = true;
        if (known.reported !== undefined && !known.taken) this.reportEntry(known);
        this.saveRecord();
      }
      return publicOrder(known);
    }
    const tracked: TrackedOrder = {
      id: '',
      clientId: order.clientId,
      symbol: order.symbol,
      side: order.side,
      kind: order.kind,
      volume: order.volume,
      price: order.price,
      status: 'open',
      filled: 0,
      average: null,
      fills: [],
      positionId: null,
      ...((order.kind === 'limit' || order.kind === 'stop') && { handed: false }),
    };
    return publicOrder(await this.submit(tracked, null));
  }

  async find(order: OrderRequest): Promise<VenueOrder | null> {
    const known = this.answered(order.clientId) ?? (await this.lookUp(order.clientId, order.symbol, order.side));
    return known ? publicOrder(known) : null;
  }

  async protect(position: VenuePosition, protection: Protection): Promise<VenueOrder[]> {
    const side: Side = position.side === 'buy' ? 'sell' : 'buy';
    const positionId = isBrokerPositionId(position) ? position.id : null;
    const placed: VenueOrder[] = [];
    const put = async (clientId: string, kind: 'stop_loss' | 'take_profit', volume: number, price: number) => {
      const known =
        this.answered(clientId) ??
        (protection.mayExist ? await this.lookUp(clientId, position.symbol, side) : undefined);
      const order =
        known ??
        (await this.submit(
          {
            id: '',
            clientId,
            symbol: position.symbol,
            side,
            kind,
            volume,
            price,
            status: 'open',
            filled: 0,
            average: null,
            fills: [],
            positionId,
          },
          positionId,
        ));
      placed.push(publicOrder(order));
    };
    const log = this.options.log;
    if (protection.stop !== null) {
      try {
        await put(`${protection.clientId}s`, 'stop_loss', position.volume, protection.stop);
      } catch (error) {
        if (error instanceof VenueRefusedError) {
          log.error(
            { position: position.id, symbol: position.symbol, stop: protection.stop },
            `${this.name} refused the stop at ${protection.stop} of the ${position.side} ${position.volume} ${position.symbol} position: ${error.message}; the position is NOT protected`,
          );
        }
        throw error;
      }
    }
    let k = 0;
    for (const target of protection.targets) {
      try {
        await put(`${protection.clientId}t${++k}`, 'take_profit', target.volume, target.price);
      } catch (error) {
        if (!(error instanceof VenueRefusedError)) throw error;
        log.error(
          { position: position.id, symbol: position.symbol, target: target.price },
          `${this.name} refused the target at ${target.price} of the ${position.side} ${position.volume} ${position.symbol} position: ${error.message}`,
        );
        // The stop stands: the orders placed are the position's (a refusal here would leave them
        // unknown to the book, never cancelled when the position goes). Without a stop, refused.
        if (protection.stop === null) throw error;
        break;
      }
    }
    // The new orders stand: only now are the ones they replace cancelled.
    for (const old of protection.replaces) await this.cancel(old);
    return placed;
  }

  async close(position: VenuePosition, volume: number, clientId: string, mayExist = false): Promise<VenueOrder> {
    const side: Side = position.side === 'buy' ? 'sell' : 'buy';
    const known =
      this.answered(clientId) ?? (mayExist ? await this.lookUp(clientId, position.symbol, side) : undefined);
    if (known) return publicOrder(known);
    const positionId = isBrokerPositionId(position) ? position.id : null;
    const unanswered = mayExist && positionId !== null ? this.orders.get(clientId) : undefined;
    if (unanswered && this.options.config.dialect === 'ctrader') {
      const learnt = await this.closedWhileAway(unanswered, position, positionId!);
      if (learnt) return publicOrder(learnt);
    }
    return publicOrder(
      await this.submit(
        {
          id: '',
          clientId,
          symbol: position.symbol,
          side,
          kind: 'market',
          volume,
          price: null,
          status: 'open',
          filled: 0,
          average: null,
          fills: [],
          positionId,
        },
        positionId,
      ),
    );
  }

  /**
   * A close sent before the agent stopped and never answered: cTrader resends nothing after a
   * logon and forgets a market order once it ended, so what it filled is what the position lost
   * meanwhile (the book's lots against the broker's now, at most the lots asked). Its price is
   * not known (average null). Undefined when the position lost nothing: the order never reached
   * the broker or filled no lot, and is sent again.
   */
  private async closedWhileAway(
    order: TrackedOrder,
    position: VenuePosition,
    positionId: string,
  ): Promise<TrackedOrder | undefined> {
    const now = (await this.requestPositions()).find((p) => p.id === positionId);
    if (now === undefined) return this.emptiedWhileAway(order, position, positionId);
    const filled = round(Math.min(order.volume, position.volume - now.volume));
    if (!(filled > 0)) return undefined;
    order.filled = filled;
    order.status = filled < order.volume ? 'cancelled' : 'filled';
    this.saveRecord();
    this.options.log.warn(
      { order: publicOrder(order), brokerLots: now.volume },
      `close ${order.clientId} was sent before the agent stopped and never answered: the broker's position ${positionId} holds ${now.volume} of the ${position.volume} lots, so it filled ${filled}`,
    );
    return order;
  }

  /**
   * An entry sent and never answered (the agent stopped, or the session dropped before its
   * report): cTrader forgets an order once it ended and resends nothing after a logon, so, as
   * for a close, what it did is read from the positions: one of its symbol and side, of at most
   * its lots, that no order of the record names, is the one it opened (the newest, should there
   * be several). Its price is the position's. Undefined when there is none: the order never
   * reached the broker or filled nothing, and is sent again.
   */
  private openedWhileAway(order: TrackedOrder, positions: VenuePosition[]): TrackedOrder | undefined {
    const named = new Set([...this.orders.values()].map((o) => o.positionId));
    const found = positions
      .filter(
        (p) =>
          p.symbol === order.symbol &&
          p.side === order.side &&
          isBrokerPositionId(p) &&
          !named.has(p.id) &&
          p.volume <= order.volume + 1e-9,
      )
      .sort((a, b) => Number(b.id) - Number(a.id) || b.id.localeCompare(a.id))[0];
    if (found === undefined) return undefined;
    order.positionId = found.id;
    order.filled = round(Math.min(order.volume, found.volume));
    order.average = found.price;
    order.fills = [{ price: found.price, volume: order.filled, time: null, fee: null }];
    order.status = order.filled < order.volume ? 'cancelled' : 'filled';
    this.saveRecord();
    this.options.log.warn(
      { order: publicOrder(order), position: found.id },
      `entry ${order.clientId} was sent and never answered, and the broker no longer knows it: the position ${found.id} it holds (${found.volume} lots ${found.side} ${found.symbol} at ${found.price}), named by no other order, is its fill`,
    );
    return order;
  }

  /**
   * cTrader after a logon but the first: the order mass status (its reports update the record)
   * and the positions. An entry of the record still open and no longer listed was filled whole
   * or cancelled meanwhile: the position it opened, if any, is its fill, given to whoever waits
   * for the order or reported as a pending entry's fill would be.
   */
  private async statusAfterLogon(): Promise<void> {
    try {
      const [positions, listed] = await Promise.all([this.requestPositions(), this.requestOrders()]);
      const open = new Set(listed.map((o) => o.clientId));
      for (const order of [...this.orders.values()]) {
        const entry = order.positionId === null && (order.kind === 'market' || isEntry(order));
        if (!entry || order.status !== 'open' || open.has(order.clientId)) continue;
        if (order.kind !== 'market' && order.id === '') continue; // not taken by the broker yet
        if (!this.openedWhileAway(order, positions)) continue;
        const waiter = this.waiting.get(order.clientId!);
        if (waiter) {
          this.waiting.delete(order.clientId!);
          if (order.handed === false) order.handed = true;
          waiter.resolve({ order });
        }
        if (isEntry(order)) this.entryFilled(order);
      }
    } catch (error) {
      this.options.log.warn(
        { err: (error as Error).message },
        'could not ask the broker for order and position status after the logon; the next reconciliation reads them',
      );
    }
  }

  /**
   * The close's position is gone at the broker: the close emptied it, or its stop or a target
   * did before the close arrived (the broker then refused the close). Told apart only by what the
   * broker says of the stop and targets (OrderStatusRequest): none filled (or none held), the
   * close filled the lots; one filled, the close filled what that left; one it no longer knows,
   * nobody can say, and the order comes back `uncertain`.
   */
  private async emptiedWhileAway(
    order: TrackedOrder,
    position: VenuePosition,
    positionId: string,
  ): Promise<TrackedOrder> {
    let byProtection = 0;
    const unknown: string[] = [];
    for (const ref of position.protection) {
      const held = [...this.orders.values()].find((o) => o.id === ref.id);
      const known = held?.clientId ? await this.lookUp(held.clientId, held.symbol, held.side) : undefined;
      if (!known || known.status === 'open') unknown.push(held?.clientId ?? ref.id);
      else byProtection = round(byProtection + known.filled);
    }
    if (unknown.length > 0) {
      this.options.log.warn(
        { order: publicOrder(order), unknown },
        `close ${order.clientId} was sent before the agent stopped and never answered, and position ${positionId} is gone at the broker, which no longer knows the close nor its stop or targets (${unknown.join(', ')}): whether the close or one of those emptied it cannot be told`,
      );
      return {
        ...order,
        uncertain: `position ${positionId} is no longer held by ${this.name}, which forgot this close and the position's stop and targets: whether this close or its stop or a target closed it while the agent was away cannot be told; check the broker's history`,
      };
    }
    const filled = round(Math.min(order.volume, Math.max(0, position.volume - byProtection)));
    order.filled = filled;
    order.status = filled === 0 ? 'rejected' : filled < order.volume ? 'cancelled' : 'filled';
    if (filled === 0)
      order.reason = `position ${positionId} was closed by its stop or target before the close reached ${this.name}`;
    this.saveRecord();
    this.options.log.warn(
      { order: publicOrder(order), byProtection },
      `close ${order.clientId} was sent before the agent stopped and never answered: position ${positionId} is gone at the broker, its stop and targets filled ${byProtection} of its ${position.volume} lots, so the close filled ${filled}`,
    );
    return order;
  }

  async cancel(ref: VenueOrderRef): Promise<void> {
    const order = [...this.orders.values()].find((o) => o.id === ref.id);
    if (order && order.status !== 'open') return;
    const spec = this.instrument(ref.symbol);
    const requestId = `${order?.clientId ?? ref.id}x${Date.now().toString(36)}`;
    const answer = await this.request(
      requestId,
      'F',
      {
        OrigClOrdID: order?.clientId ?? ref.id,
        OrderID: ref.id,
        ClOrdID: requestId,
        Instrument: { Symbol: ref.symbol },
        Side: order?.side === 'sell' ? '2' : '1',
        TransactTime: new Date(),
        ...(order && spec && { OrderQtyData: { OrderQty: round(order.volume * spec.contractSize) } }),
      },
      (type, message) => {
        if (type === '8')
          return (
            message.ClOrdID === requestId || (message.OrigClOrdID === order?.clientId && message.OrdStatus === '4')
          );
        if (type === '9') return message.ClOrdID === requestId;
        return false;
      },
    );
    if (answer.type === '9') {
      // 0 too late (filled meanwhile), 1 unknown order: either way it is no longer open.
      const reason = String(answer.message.CxlRejReason ?? '');
      if (reason === '0' || reason === '1') return;
      throw new VenueRefusedError(String(answer.message.Text ?? `cancel rejected (reason ${reason || 'not given'})`));
    }
  }

  async reports(): Promise<VenueReport[]> {
    // The agent asks again only after it wrote its book with what it took last time.
    for (const clientId of this.handedOut.splice(0)) {
      const order = this.orders.get(clientId);
      if (order) order.taken = true;
    }
    const reports = this.pendingReports.splice(0);
    for (const report of reports)
      if (report.type === 'entry_filled' && report.order.clientId) this.handedOut.push(report.order.clientId);
    if (reports.length > 0 || this.handedOut.length > 0) this.saveRecord();
    return reports;
  }

  status(): Record<string, unknown> {
    const of = (link: FixLink) => ({
      loggedOn: link.loggedOn,
      ...(link.lastError !== null && !link.loggedOn && { lastError: link.lastError }),
      events: [...link.events],
    });
    const refused = Object.fromEntries(
      [...this.quotesRefused].map(([symbol, r]) => [symbol, { reason: r.reason, since: r.since }]),
    );
    return {
      fixSessions: { trade: of(this.trade), ...(this.quotes !== this.trade && { quote: of(this.quotes) }) },
      ...(this.quotesRefused.size > 0 && { quotesRefused: refused }),
    };
  }

  async shutdown(): Promise<void> {
    await Promise.all([this.trade.stop(), this.quotes === this.trade ? Promise.resolve() : this.quotes.stop()]);
  }

  // --- orders ---

  private async submit(order: TrackedOrder, positionId: string | null): Promise<TrackedOrder> {
    if (!this.trade.loggedOn)
      throw new VenueUnreachableError(this.trade.lastError ?? 'the FIX trade session is not logged on');
    const spec = this.instrument(order.symbol);
    if (!spec)
      throw new VenueRefusedError(`${order.symbol} is not an instrument of the FIX config; add it under "instruments"`);
    const type = order.kind === 'market' ? '1' : order.kind === 'limit' || order.kind === 'take_profit' ? '2' : '3';
    this.orders.set(order.clientId!, order);
    // On disk before it leaves: an agent stopped before the broker's answer then recognises the
    // order when the broker reports it (resend, order mass status) instead of sending it again.
    this.saveRecord();
    const answered = new Promise<Answer>((resolve) => {
      const timer = setTimeout(() => {
        this.waiting.delete(order.clientId!);
        resolve({ refused: '' });
      }, ANSWER_MS);
      this.waiting.set(order.clientId!, {
        // A market order is answered by its fill; a pending one by its acceptance.
        until: (o) => o.status !== 'open' || (type !== '1' && o.id !== ''),
        resolve: (a) => {
          clearTimeout(timer);
          resolve(a);
        },
      });
    });
    this.trade.send('D', {
      ClOrdID: order.clientId,
      Instrument: { Symbol: order.symbol },
      Side: order.side === 'buy' ? '1' : '2',
      TransactTime: new Date(),
      OrderQtyData: { OrderQty: round(order.volume * spec.contractSize) },
      OrdType: type,
      ...(type === '2' && { Price: order.price, TimeInForce: '1' }),
      ...(type === '3' && { StopPx: order.price, TimeInForce: '1' }),
      ...(positionId !== null && { PosMaintRptID: positionId }),
    });
    const answer = await answered;
    if ('refused' in answer) {
      if (answer.refused === '')
        throw new VenueUnreachableError(`no ExecutionReport for order ${order.clientId} within ${ANSWER_MS / 1000} s`);
      this.orders.delete(order.clientId!);
      this.saveRecord();
      throw new VenueRefusedError(answer.refused);
    }
    return answer.order;
  }

  /** OrderStatusRequest for an order that may stand already; undefined when the broker does not know it (or does not answer such requests). */
  private async lookUp(clientId: string, symbol: string, side: Side): Promise<TrackedOrder | undefined> {
    if (!this.trade.loggedOn)
      throw new VenueUnreachableError(this.trade.lastError ?? 'the FIX trade session is not logged on');
    const answer = await this.request(
      clientId,
      'H',
      { ClOrdID: clientId, Instrument: { Symbol: symbol }, Side: side === 'buy' ? '1' : '2' },
      (type, m) => type === '8' && m.ClOrdID === clientId,
      3000,
    ).catch(() => null);
    if (!answer || answer.type !== '8' || answer.message.OrdStatus === '8') return undefined;
    return this.answered(clientId);
  }

  /** An order the broker answered (an ExecutionReport gave it an id or a final state); one sent but never answered is not. */
  private answered(clientId: string): TrackedOrder | undefined {
    const order = this.orders.get(clientId);
    return order && (order.id !== '' || order.status !== 'open') ? order : undefined;
  }

  /** Sends a request and waits for the message that answers it (or its Business Message Reject / session Reject). */
  private request(
    key: string,
    msgType: string,
    body: FixMessage,
    answers: (type: string, message: FixMessage) => boolean,
    timeoutMs = ANSWER_MS,
  ): Promise<{ type: string; message: FixMessage }> {
    if (!this.trade.loggedOn)
      return Promise.reject(
        new VenueUnreachableError(this.trade.lastError ?? 'the FIX trade session is not logged on'),
      );
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.requests.delete(key);
        reject(new VenueUnreachableError(`no answer to FIX ${msgType} ${key} within ${timeoutMs / 1000} s`));
      }, timeoutMs);
      this.requests.set(key, (type, message) => {
        // A Business Message Reject names the request by its id where the broker sets 379, else by its sequence number.
        const rejected =
          (type === 'j' &&
            (message.BusinessRejectRefID === key ||
              (message.BusinessRejectRefID === undefined &&
                this.trade.orderOfSeq(Number(message.RefSeqNum)) === key))) ||
          (type === '3' && this.trade.orderOfSeq(Number(message.RefSeqNum)) === key);
        if (!rejected && !answers(type, message)) return false;
        clearTimeout(timer);
        this.requests.delete(key);
        if (rejected) reject(new VenueRefusedError(rejectText(message)));
        else resolve({ type, message });
        return true;
      });
      this.trade.send(msgType, body);
    });
  }

  private received(type: string, message: FixMessage, link: 'trade' | 'quote'): void {
    const quoteLink = link === (this.options.config.quote ? 'quote' : 'trade');
    if (quoteLink && (type === 'W' || type === 'X' || type === 'Y')) return this.marketData(type, message);
    if (quoteLink && (type === '3' || type === 'j')) {
      // A Reject of a MarketDataRequest: the broker gives no quotes (QuickFIX's executor does this).
      const session = link === 'quote' ? this.quotes : this.trade;
      const id =
        type === 'j'
          ? String(message.BusinessRejectRefID ?? '') || session.orderOfSeq(Number(message.RefSeqNum))
          : session.orderOfSeq(Number(message.RefSeqNum));
      if (id?.startsWith('q') && (type === '3' || message.RefMsgType === 'V' || message.BusinessRejectRefID === id)) {
        const symbol = id.slice(1);
        return this.refuseQuotes(symbol, `${this.name} refuses market data for ${symbol}: ${rejectText(message)}`);
      }
    }
    if (link !== 'trade') return;
    for (const handle of [...this.requests.values()]) handle(type, message);
    if (type === '8') return this.executionReport(message);
    if (type === '3' || type === 'j') {
      const id =
        type === 'j' ? String(message.BusinessRejectRefID ?? '') : this.trade.orderOfSeq(Number(message.RefSeqNum));
      const waiter = id ? this.waiting.get(id) : undefined;
      if (waiter && id) {
        this.waiting.delete(id);
        waiter.resolve({ refused: rejectText(message) });
      }
    }
  }

  private executionReport(m: FixMessage): void {
    // A cancel's report carries the cancel request's ClOrdID and the order's in OrigClOrdID.
    const clientId =
      m.OrigClOrdID !== undefined && !this.orders.has(String(m.ClOrdID ?? ''))
        ? String(m.OrigClOrdID)
        : String(m.ClOrdID ?? '');
    // A resent report (PossDup after a gap fill) is applied once. Keyed with the order: some
    // engines number their ExecIDs afresh after a restart.
    const execId = m.ExecID === undefined ? '' : `${clientId}|${String(m.ExecID)}`;
    if (execId && this.execIds.has(execId)) return;
    if (execId) this.execIds.add(execId);
    const order = this.orders.get(clientId);
    if (!order) return;
    // An order status saying the broker does not know the order (39=8): it never took it, or
    // forgot it; either way nothing of the record changes (an order never taken may be sent again).
    if (m.ExecType === 'I' && m.OrdStatus === '8') return;
    const spec = this.instrument(order.symbol);
    if (m.OrderID !== undefined) order.id = String(m.OrderID);
    if (m.PosMaintRptID !== undefined) order.positionId = String(m.PosMaintRptID);
    // The order tracker counts the lots: only where CumQty grows, so after an order status told a
    // fill, its own report (resent later) is not a second one; lots an order status tells whose
    // reports never came are one fill at the price that makes the new average.
    const step = applyUpdate(order, updateOf(m, spec?.contractSize ?? 1));
    if (step.lots > 0 && step.price !== null) {
      order.fills.push({
        price: Number(step.price.toFixed(spec?.digits ?? 8)),
        volume: step.lots,
        time: m.ExecType !== 'I' && m.TransactTime instanceof Date ? m.TransactTime.toISOString() : null,
        fee: null,
      });
      if (m.ExecID !== undefined) order.execFilled = { ...order.execFilled, [String(m.ExecID)]: step.order.filled };
    }
    Object.assign(order, {
      filled: step.order.filled,
      average: step.order.average,
      status: step.order.status,
      ...(step.order.reason !== undefined && { reason: step.order.reason }),
    });
    // An entry's lots taken back: the book's position shrinks by them; a stop's, target's or
    // close's: the position holds them again (venue-reports.ts).
    if (step.busted > 0) {
      if (order.reported !== undefined) order.reported = round(Math.max(0, order.reported - step.busted));
      // The fill the bust names (ExecRefID), and its lots taken back in all: the ledger's bust.
      const ref = m.ExecRefID === undefined ? undefined : String(m.ExecRefID);
      const bustedAt = ref === undefined ? undefined : order.execFilled?.[ref];
      const named: { bustedAt: number; bustedInAll: number } | undefined =
        ref === undefined || bustedAt === undefined
          ? undefined
          : { bustedAt, bustedInAll: round((order.execBusted?.[ref] ?? 0) + step.busted) };
      if (named !== undefined) order.execBusted = { ...order.execBusted, [ref!]: named.bustedInAll };
      this.saveRecord();
      this.options.log.warn(
        { order: publicOrder(order), busted: step.busted },
        `the broker took back ${step.busted} lots of the fills of order ${order.clientId} (trade cancel)`,
      );
      this.pendingReports.push({ type: 'fill_busted', order: publicOrder(order), lots: step.busted, ...named });
      return;
    }
    this.saveRecord();
    const waiter = this.waiting.get(clientId);
    if (waiter) {
      if (order.status === 'rejected') {
        this.waiting.delete(clientId);
        waiter.resolve({
          refused: String(m.Text ?? `order rejected (OrdRejReason ${String(m.OrdRejReason ?? 'not given')})`),
        });
      } else if (waiter.until(order)) {
        this.waiting.delete(clientId);
        // place() returns it to the agent now (on disk too: a fill while the agent is away is then reported at the restart).
        if (order.handed === false) {
          order.handed = true;
          this.saveRecord();
        }
        waiter.resolve({ order });
        // A pending entry whose first answer is its fill: the position comes from this report too.
        if (isEntry(order) && order.filled > 0) this.entryFilled(order);
      }
      return;
    }
    // Nobody waits for it: the broker did it on its own (a pending entry, a stop or a target filled).
    if (step.lots === 0) return;
    if (isEntry(order)) {
      this.entryFilled(order);
    } else if (order.kind === 'stop_loss' || order.kind === 'take_profit') {
      this.pendingReports.push({
        type: 'position_reduced',
        symbol: order.symbol,
        side: order.side === 'buy' ? 'sell' : 'buy',
        volume: step.lots,
        price: step.price,
        by: order.kind,
        order: publicOrder(order),
      });
    }
  }

  /**
   * A pending entry the broker filled, whole or in part. Partly: its filled lots are the entry
   * at once (the book gets the position, the broker its stop and targets for exactly those
   * lots) and the rest is cancelled, so no lots sit at the broker unknown and unprotected while
   * the rest waits. Lots the broker fills after that (its fill crossing the cancel) are not the
   * book's: an error says so.
   */
  private entryFilled(order: TrackedOrder): void {
    if (order.reported === undefined) {
      if (order.status !== 'filled' && order.status !== 'open' && order.status !== 'cancelled') return;
      order.reported = order.filled;
      this.saveRecord();
      if (order.handed === false) {
        this.options.log.info(
          { order: publicOrder(order) },
          `the broker filled order ${order.clientId}, sent before the agent stopped and never answered: the fill goes to the book when the signal is executed again`,
        );
      } else {
        this.reportEntry(order);
      }
      if (order.status === 'open') {
        this.options.log.warn(
          { order: publicOrder(order) },
          `the broker filled ${order.filled} of ${order.volume} lots of pending order ${order.clientId}: those lots are the entry, the rest is cancelled`,
        );
        this.cancelRest(order);
      }
      return;
    }
    if (order.filled > order.reported) {
      this.options.log.error(
        { order: publicOrder(order) },
        `the broker filled ${round(order.filled - order.reported)} more lots of order ${order.clientId} after its rest was cancelled; those lots are NOT in the book nor protected: close them at the broker`,
      );
      order.reported = order.filled;
      this.saveRecord();
    }
  }

  /** An entry's fill for the agent's next reports(), once. */
  private reportEntry(order: TrackedOrder): void {
    if (this.pendingReports.some((r) => r.type === 'entry_filled' && r.order.clientId === order.clientId)) return;
    this.pendingReports.push({ type: 'entry_filled', order: publicOrder(order) });
  }

  /**
   * Cancels a partly filled entry's rest, once at a time. The record says the entry was reported
   * and is still open until the broker confirms, so a cancel lost with the agent is sent again
   * at the next start. A broker that no longer holds the order (Order Cancel Reject) has no rest.
   */
  private cancelRest(order: TrackedOrder): void {
    const clientId = order.clientId!;
    if (this.restCancels.has(clientId) || !this.trade.loggedOn) return;
    const done = this.cancel({ id: order.id, symbol: order.symbol })
      .then(() => {
        if (order.status !== 'open') return;
        order.status = 'cancelled';
        this.saveRecord();
      })
      .catch((error: unknown) => {
        this.options.log.error(
          { err: error, order: clientId },
          `the rest of partly filled order ${clientId} could not be cancelled; the broker may still fill it (the cancel is sent again at the next start)`,
        );
      })
      .finally(() => this.restCancels.delete(clientId));
    this.restCancels.set(clientId, done);
  }

  /**
   * Plain FIX 4.4 at start: an OrderStatusRequest (H) for each order the record holds as
   * unfinished (working, or sent without an answer); the ExecutionReports (150=I) that answer
   * them apply as any report. A broker that refuses the request (session Reject or Business
   * Message Reject) or leaves it unanswered is left to its resend, and said so once.
   */
  private async askOrderStatus(): Promise<void> {
    const unfinished = [...this.orders.values()].filter((o) => o.status === 'open');
    if (unfinished.length === 0) return;
    const asked = await Promise.allSettled(
      unfinished.map((o) =>
        this.request(
          o.clientId!,
          'H',
          {
            ClOrdID: o.clientId,
            ...(o.id !== '' && { OrderID: o.id }),
            Instrument: { Symbol: o.symbol },
            Side: o.side === 'buy' ? '1' : '2',
          },
          (type, m) => type === '8' && m.ClOrdID === o.clientId && m.ExecType === 'I',
          STATUS_MS,
        ),
      ),
    );
    const failed = asked.find((a): a is PromiseRejectedResult => a.status === 'rejected');
    if (failed) {
      this.options.log.warn(
        { err: (failed.reason as Error).message, orders: unfinished.length },
        'the broker does not answer OrderStatusRequest; what became of the orders while the agent was away rests on its resend of their ExecutionReports',
      );
    } else {
      this.options.log.info(
        { orders: unfinished.length },
        'order status asked for the unfinished orders of the record',
      );
    }
  }

  private openOrders(): VenueOrder[] {
    return [...this.orders.values()].filter((o) => o.status === 'open' && o.id !== '').map(publicOrder);
  }

  /** cTrader: RequestForPositions, answered by one PositionReport per position. */
  private async requestPositions(): Promise<VenuePosition[]> {
    const id = `pos${Date.now().toString(36)}`;
    const positions: VenuePosition[] = [];
    let expected = -1;
    // Account, AccountType and ClearingBusinessDate are required by FIX 4.4 (cTrader ignores them).
    const account = this.options.credentials?.username ?? this.options.config.trade.senderCompId;
    const today = new Date().toISOString().slice(0, 10).replaceAll('-', '');
    await this.request(
      id,
      'AN',
      {
        PosReqID: id,
        PosReqType: 0,
        Account: account,
        AccountType: 1,
        ClearingBusinessDate: today,
        TransactTime: new Date(),
      },
      (type, m) => {
        if (type !== 'AP' || m.PosReqID !== id) return false;
        expected = Number(m.TotalNumPosReports ?? 0);
        if (m.PosReqResult !== undefined && m.PosReqResult !== '0' && m.PosReqResult !== 0) return true;
        const symbol = String((m.Instrument as FixMessage | undefined)?.Symbol ?? '');
        const spec = this.instrument(symbol);
        for (const q of (m.PositionQty as { NoPositions?: FixMessage[] } | undefined)?.NoPositions ?? []) {
          const long = Number(q.LongQty ?? 0);
          const short = Number(q.ShortQty ?? 0);
          const units = long - short;
          if (units === 0 || !symbol) continue;
          positions.push({
            id: String(m.PosMaintRptID ?? `${symbol}:${units > 0 ? 'buy' : 'sell'}`),
            symbol,
            side: units > 0 ? 'buy' : 'sell',
            volume: round(Math.abs(units) / (spec?.contractSize ?? 1)),
            price: Number(m.SettlPrice ?? 0),
            protection: [],
          });
        }
        return expected <= 0 || positions.length >= expected;
      },
    );
    return positions;
  }

  /** cTrader: OrderMassStatusRequest for all orders, answered by an ExecutionReport each (the last one says so). */
  private async requestOrders(): Promise<VenueOrder[]> {
    const id = `mass${Date.now().toString(36)}`;
    const found: VenueOrder[] = [];
    await this.request(id, 'AF', { MassStatusReqID: id, MassStatusReqType: 7 }, (type, m) => {
      if (type !== '8' || m.MassStatusReqID !== id) return false;
      const clientId = m.ClOrdID === undefined ? null : String(m.ClOrdID);
      const symbol = String((m.Instrument as FixMessage | undefined)?.Symbol ?? '');
      const spec = this.instrument(symbol);
      if (m.OrderID !== undefined && (m.OrdStatus === '0' || m.OrdStatus === '1')) {
        const kind = m.OrdType === '3' ? 'stop' : 'limit';
        const order: TrackedOrder = this.orders.get(clientId ?? '') ?? {
          id: String(m.OrderID),
          clientId,
          symbol,
          side: m.Side === '2' ? 'sell' : 'buy',
          kind,
          volume: round(Number((m.OrderQtyData as FixMessage | undefined)?.OrderQty ?? 0) / (spec?.contractSize ?? 1)),
          price: Number(m.Price ?? m.StopPx ?? 0),
          status: 'open',
          filled: 0,
          average: null,
          fills: [],
          positionId: null,
        };
        found.push(publicOrder(order));
      }
      return m.LastRptRequested === true || m.LastRptRequested === 'Y' || Number(m.TotNumReports ?? 0) === 0;
    });
    return found;
  }

  // --- quotes ---

  private subscribe(symbol: string): void {
    this.quotes.send('V', {
      MDReqID: `q${symbol}`,
      SubscriptionRequestType: '1',
      MarketDepth: 1,
      MDUpdateType: 1,
      // jspurefix names FIX 4.4 repeating groups by their component (MDReqGrp…), as the FIX repository does.
      MDReqGrp: { NoMDEntryTypes: [{ MDEntryType: '0' }, { MDEntryType: '1' }] },
      InstrmtMDReqGrp: { NoRelatedSym: [{ Instrument: { Symbol: symbol } }] },
    });
  }

  private marketData(type: string, m: FixMessage): void {
    const reqSymbol = typeof m.MDReqID === 'string' && m.MDReqID.startsWith('q') ? m.MDReqID.slice(1) : null;
    if (type === 'Y') {
      if (reqSymbol)
        this.refuseQuotes(
          reqSymbol,
          `${this.name} refuses market data for ${reqSymbol}: ${String(m.Text ?? `MDReqRejReason ${String(m.MDReqRejReason ?? 'not given')}`)}`,
        );
      return;
    }
    const top = (m.Instrument as FixMessage | undefined)?.Symbol;
    const touched = new Set<string>();
    const group = (m.MDFullGrp ?? m.MDIncGrp) as { NoMDEntries?: FixMessage[] } | undefined;
    for (const entry of group?.NoMDEntries ?? []) {
      const symbol = String((entry.Instrument as FixMessage | undefined)?.Symbol ?? top ?? reqSymbol ?? '');
      if (
        !symbol ||
        (entry.MDUpdateAction !== undefined && entry.MDUpdateAction !== '0' && entry.MDUpdateAction !== '1')
      )
        continue;
      const price = Number(entry.MDEntryPx);
      if (!Number.isFinite(price)) continue;
      const quote = this.prices.get(symbol) ?? { bid: null, ask: null, time: 0 };
      if (entry.MDEntryType === '0') quote.bid = price;
      else if (entry.MDEntryType === '1') quote.ask = price;
      quote.time = Date.now();
      this.prices.set(symbol, quote);
      touched.add(symbol);
    }
    for (const symbol of touched) {
      const q = this.prices.get(symbol)!;
      if (q.bid !== null && q.ask !== null) this.wakeQuote(symbol, null);
    }
  }

  /** The broker will not quote `symbol`: said once at error level, published, and the quote's waiters told. */
  private refuseQuotes(symbol: string, reason: string): void {
    if (!this.quotesRefused.has(symbol))
      this.options.log.error(
        { symbol },
        `${reason}; signals that need a quote of ${symbol} are rejected, pending orders at a price sized in lots still go out`,
      );
    this.quotesRefused.set(symbol, {
      reason,
      since: this.quotesRefused.get(symbol)?.since ?? new Date().toISOString(),
      at: Date.now(),
    });
    this.subscribed.delete(symbol);
    this.wakeQuote(symbol, reason);
  }

  private wakeQuote(symbol: string, error: string | null): void {
    for (const wake of this.quoteWaiters.get(symbol)?.splice(0) ?? []) wake(error);
  }

  // --- the orders record ---

  private loadRecord(): void {
    try {
      const saved = JSON.parse(readFileSync(this.recordFile, 'utf8')) as { orders: TrackedOrder[]; execIds: string[] };
      for (const order of saved.orders) this.orders.set(order.clientId!, order);
      for (const id of saved.execIds) this.execIds.add(id);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }

  private saveRecord(): void {
    // Settled orders older than the open ones are not needed to answer a retry after a day. An
    // order sent and not yet answered (no id) is kept: the broker may hold it.
    // An entry learnt from its position (no order id) is kept too: its position is named.
    const orders = [...this.orders.values()]
      .filter((o) => o.id !== '' || o.status === 'open' || o.positionId !== null)
      .slice(-500);
    // Synced: an order on its way to the broker must be in the record after a power loss too.
    writeFileAtomicSync(this.recordFile, JSON.stringify({ orders, execIds: [...this.execIds].slice(-2000) }));
  }
}

function publicOrder(order: TrackedOrder): VenueOrder {
  const {
    positionId,
    reported: _reported,
    taken: _taken,
    handed: _handed,
    execFilled: _execFilled,
    execBusted: _execBusted,
    ...rest
  } = order;
  return { ...rest, fills: [...rest.fills], ...(positionId !== null && { positionId }) };
}

/** A pending entry (limit or stop), whose fill makes a position. */
function isEntry(order: TrackedOrder): boolean {
  return order.kind === 'limit' || order.kind === 'stop';
}

/** A position id the broker gave (cTrader's PosMaintRptID), not our `symbol:side` stand-in. */
function isBrokerPositionId(position: VenuePosition): boolean {
  return position.id !== '' && position.id !== `${position.symbol}:${position.side}`;
}

/**
 * Signals speak in pips: the engine's catalog knows the pip of the usual symbols; otherwise
 * forex's rule (a pip is the fourth decimal, the second for yen pairs: one digit less than the
 * broker quotes with 5 or 3 digits). An `--instruments` file's pipSize still wins.
 */
function pipSizeOf(canonical: string, digits: number): number {
  const known = defaultInstrument(canonical);
  if (known) return known.pipSize;
  return Number((10 ** -(digits === 5 || digits === 3 ? digits - 1 : digits)).toFixed(digits));
}

function rejectText(m: FixMessage): string {
  const text = String(m.Text ?? 'rejected without a reason');
  return m.RefTagID !== undefined ? `${text} (tag ${String(m.RefTagID)})` : text;
}

/**
 * An ExecutionReport in the order tracker's words: CumQty and AvgPx (cumulative), LastQty at
 * LastPx, OrdStatus; quantities in lots of `unit` units. ExecType H (trade cancel) is a bust.
 */
function updateOf(m: FixMessage, unit: number): OrderUpdate {
  const statuses: Record<string, OrderUpdate['status']> = {
    '1': 'partially_filled',
    '2': 'filled',
    '4': 'cancelled',
    '8': 'rejected',
    C: 'expired',
  };
  const lastQty = Number(m.LastQty ?? 0);
  const fill = m.ExecType === 'F' || m.ExecType === '1' || m.ExecType === '2';
  return {
    status: m.ExecType === 'H' ? 'busted' : (statuses[String(m.OrdStatus ?? '')] ?? 'new'),
    filled: m.CumQty === undefined ? null : Number(m.CumQty) / unit,
    average: m.AvgPx === undefined || Number(m.CumQty ?? 1) === 0 ? null : Number(m.AvgPx),
    last: fill && lastQty > 0 ? { price: Number(m.LastPx), volume: lastQty / unit } : null,
    ...(m.Text !== undefined && { reason: String(m.Text) }),
  };
}

function round(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}
