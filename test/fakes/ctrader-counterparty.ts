import '../../src/agent/venues/fix/jspurefix-prelude.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ctraderDictionary } from '../../src/agent/venues/fix/fix-dictionary.js';
import { launchFixAcceptor } from './fix-acceptor.js';

type Fields = Record<string, unknown>;

export interface CounterpartyQuote {
  bid: number;
  ask: number;
}

/** A position of the account: cTrader's hedged accounts hold one per opening order. */
export interface BrokerPosition {
  id: string;
  symbol: string;
  side: 'buy' | 'sell';
  /** Units (lots × contract size). */
  units: number;
  price: number;
}

/** An order resting at the broker: a pending entry, or a stop or limit protecting a position (721). */
export interface RestingOrder {
  id: string;
  clOrdId: string;
  symbol: string;
  side: 'buy' | 'sell';
  kind: 'limit' | 'stop';
  units: number;
  price: number;
  positionId: string | null;
  /** Units filled so far, and their average price. */
  cumUnits: number;
  avgPx: number;
  /** The position this (opening) order made at its first fill: later fills add to it. */
  opened: string | null;
}

export interface CounterpartyOptions {
  tradePort: number;
  quotePort: number;
  /** The agent's SenderCompID. */
  agentCompId: string;
  credentials: { user: string; password: string };
  /** Symbol (cTrader's numeric ids or names) → the quote; change it with `setPrice`. */
  prices: Record<string, CounterpartyQuote>;
  /** Called with every application message the trade session receives, as it arrives. */
  onMessage?: (type: string, message: Fields) => void;
}

/**
 * A broker on jspurefix's acceptor side that plays cTrader's FIX 4.4 rules (TargetCompID
 * cServer, QUOTE and TRADE sessions named by sub ids, Logon with 553/554 and 141=Y, symbols by
 * id, hedged positions named by PosMaintRptID 721). What it does with each message:
 *
 * - NewOrderSingle market (40=1): filled at once and whole at the current quote (buy at the
 *   ask, sell at the bid): an ExecutionReport new (150=0) then filled (150=F) carrying the
 *   position's id (721). Without 721 it opens a new position; with 721 it reduces that one.
 * - NewOrderSingle limit (40=2) or stop (40=3): accepted (150=0) and held; filled at the market
 *   once the quote reaches it (limit buy: ask ≤ price; stop buy: ask ≥ price; mirrored for
 *   sells). With 721 it protects that position: its fill reduces the position, and when the
 *   position is gone the broker cancels the orders tied to it (150=4, unsolicited).
 * - Unknown symbol, zero quantity, a limit or stop without its price, a 721 naming no
 *   position: ExecutionReport rejected (150=8) with the reason in 58.
 * - OrderCancelRequest (35=F): ExecutionReport cancelled (150=4, ClOrdID of the request,
 *   OrigClOrdID of the order); an order it does not hold: OrderCancelReject (35=9, 102=1).
 *   With `holdCancels` on, no answer and nothing done (a stalled broker).
 * - With `partialFill` set, an opening order fills in two parts (see the field); with
 *   `partialClose` set, a closing market order fills in part or not at all, the rest cancelled.
 * - With `refuseStops` set, a stop order naming a position is rejected (150=8) with that text.
 * - RequestForPositions (35=AN): one PositionReport (35=AP) per open position, 721 its id,
 *   727 their count; none: one PositionReport with 728=2 (no positions).
 * - OrderMassStatusRequest (35=AF): an ExecutionReport (150=I) per held order, the last with
 *   912=Y; none: one with 911=0. A partly filled entry's says so (39=1, 14 and 6 its fills so
 *   far, 721 the position they opened): all that tells fills made while the agent was away,
 *   since the broker resends nothing (each logon resets the sequence numbers).
 * - OrderStatusRequest (35=H): an ExecutionReport (150=I) of the order, 39=8 when unknown.
 * - MarketDataRequest (35=V) on the quote session: a snapshot (35=W) of bid and offer; an
 *   unknown symbol: MarketDataRequestReject (35=Y). With `streamQuotes` on, a subscription
 *   (263=1) also gets a W at each new quote (`setPrice`), as cTrader sends spot prices, until
 *   263=2 or the session ends. Off by default. `streamQuoteOnly` streams a quote whose fills
 *   lag behind it (they come with the next `setPrice`).
 */
export class CTraderCounterparty {
  readonly logons: { session: string; user: string; password: string }[] = [];
  readonly received: { type: string; message: Fields }[] = [];
  readonly positions = new Map<string, BrokerPosition>();
  readonly resting = new Map<string, RestingOrder>();
  private readonly launchers: { stop(): void }[] = [];
  private tradeSession: { push(type: string, body: Fields): void; done?(): void } | null = null;
  /** Set by `dropTradeSession` until the next logon: what the trade session would send is lost. */
  private tradeCut = false;
  /** Live MarketDataRequests: the quote session, its MDReqID and the symbol. */
  /** Whether subscribers get each new quote (see the class comment). */
  streamQuotes = false;
  /** OrderCancelRequests go unanswered and change nothing (a broker that stalls), while true. */
  holdCancels = false;
  /**
   * While set, an opening order (no 721) fills in two parts: first `units` (150=F, 39=1, 151 the
   * rest), then for a market order the rest at `restPrice` (or the same price) or, with `rest`
   * 'cancel', the rest cancelled (150=4, 14 the part); a pending order keeps its rest resting,
   * never filled, until cancelled. With `units` 0 nothing fills: the order is cancelled whole.
   */
  partialFill: { units: number; rest: 'fill' | 'cancel'; restPrice?: number } | null = null;
  /**
   * While set, a closing market order (with 721) fills only `units` (150=F, 39=1) and its rest is
   * cancelled (150=4, 14 the part); with `units` 0 nothing fills: the order is cancelled whole.
   */
  partialClose: { units: number } | null = null;
  /** A stop naming a position (a stop loss) is rejected with this text, while set (a stop too close to the market…). */
  refuseStops: string | null = null;
  private readonly subscriptions: {
    session: { push(type: string, body: Fields): void };
    reqId: string;
    symbol: string;
  }[] = [];
  private seq = 0;
  /** Symbols whose last quote was streamed with its fills held back (`streamQuoteOnly`). */
  private readonly fillsHeld = new Set<string>();
  private readonly dir = mkdtempSync(path.join(tmpdir(), 'signalgate-ctrader-'));

  constructor(readonly options: CounterpartyOptions) {}

  /**
   * The session file (`--fix-config`) of an agent on `--venue fix` that trades with this broker:
   * both sessions on loopback, and EURUSD as the broker's symbol id 1.
   */
  agentConfig(balance: number): object {
    const session = (port: number) => ({
      host: '127.0.0.1',
      port,
      tls: false,
      senderCompId: this.options.agentCompId,
      targetCompId: 'cServer',
      heartbeatSeconds: 30,
    });
    return {
      dialect: 'ctrader',
      trade: session(this.options.tradePort),
      quote: session(this.options.quotePort),
      account: { currency: 'USD', balance },
      instruments: {
        EURUSD: {
          brokerSymbol: '1',
          digits: 5,
          contractSize: 100000,
          lotMin: 0.01,
          lotStep: 0.01,
          lotMax: 50,
          quoteCurrency: 'USD',
        },
      },
    };
  }

  start(): void {
    const dictionary = ctraderDictionary(this.dir);
    this.launch('TRADE', this.options.tradePort, dictionary);
    this.launch('QUOTE', this.options.quotePort, dictionary);
  }

  stop(): void {
    for (const launcher of this.launchers.splice(0)) launcher.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }

  get loggedOn(): boolean {
    return this.tradeSession !== null;
  }

  /** A new quote: held orders it reaches fill at it, and it is streamed to subscribers (`streamQuotes`). */
  setPrice(symbol: string, bid: number, ask: number): void {
    this.options.prices[symbol] = { bid, ask };
    this.fillsHeld.delete(symbol);
    // The broker's fills go out before the quote that caused them, as a broker's would.
    this.reach(symbol, bid, ask);
    if (this.streamQuotes)
      for (const s of this.subscriptions) if (s.symbol === symbol) this.snapshot(s.session, s.reqId, symbol);
  }

  /**
   * A new quote streamed to subscribers ahead of the fills it causes, as a broker's price feed
   * may run ahead of its trade reports (or touch a price too briefly for an order's turn): held
   * orders it reaches are not filled now (nor when another order arrives meanwhile), but at the
   * next `setPrice` that reaches them. Market orders still fill at it.
   */
  streamQuoteOnly(symbol: string, bid: number, ask: number): void {
    this.options.prices[symbol] = { bid, ask };
    this.fillsHeld.add(symbol);
    for (const s of this.subscriptions) if (s.symbol === symbol) this.snapshot(s.session, s.reqId, symbol);
  }

  private reach(symbol: string, bid: number, ask: number): void {
    if (this.fillsHeld.has(symbol)) return;
    for (const order of [...this.resting.values()]) {
      // A partly filled entry's rest waits for its cancel (`partialFill`).
      if (order.symbol !== symbol || !this.resting.has(order.id) || order.cumUnits > 0) continue;
      const reached =
        order.side === 'buy'
          ? order.kind === 'limit'
            ? ask <= order.price
            : ask >= order.price
          : order.kind === 'limit'
            ? bid >= order.price
            : bid <= order.price;
      if (reached) this.fill(order, order.side === 'buy' ? ask : bid);
    }
  }

  /** Closes a position as the platform would (a trader's click, a stop-out), with its orders. */
  closePosition(id: string): void {
    this.positions.delete(id);
    this.cancelTied(id);
  }

  // --- what the trade session answers ---

  private onTrade(type: string, m: Fields): void {
    this.received.push({ type, message: m });
    this.options.onMessage?.(type, m);
    if (type === 'D') return this.newOrder(m);
    if (type === 'F') return this.holdCancels ? undefined : this.cancelRequest(m);
    if (type === 'AN') return this.positionRequest(m);
    if (type === 'AF') return this.massStatus(m);
    if (type === 'H') return this.statusRequest(m);
  }

  private newOrder(m: Fields): void {
    const symbol = String((m.Instrument as Fields | undefined)?.Symbol ?? '');
    const side = m.Side === '2' ? 'sell' : 'buy';
    const units = Number((m.OrderQtyData as Fields | undefined)?.OrderQty ?? 0);
    const kind = m.OrdType === '1' ? 'market' : m.OrdType === '2' ? 'limit' : m.OrdType === '3' ? 'stop' : null;
    const price = kind === 'limit' ? Number(m.Price) : kind === 'stop' ? Number(m.StopPx) : null;
    const positionId = m.PosMaintRptID === undefined ? null : String(m.PosMaintRptID);
    const clOrdId = String(m.ClOrdID ?? '');
    const id = String(++this.seq);
    const order: RestingOrder = {
      id,
      clOrdId,
      symbol,
      side,
      kind: kind === 'stop' ? 'stop' : 'limit',
      units,
      price: price ?? 0,
      positionId,
      cumUnits: 0,
      avgPx: 0,
      opened: null,
    };
    const refuse = (text: string) =>
      this.push('8', { ...this.report(order, '8', '8'), OrdType: m.OrdType, Text: text });
    if (!this.options.prices[symbol]) return refuse(`TRADING_BAD_SYMBOL: unknown symbol ${symbol}`);
    if (kind === null)
      return refuse(`TRADING_BAD_ORDER_TYPE: OrdType ${String(m.OrdType)} is not market, limit or stop`);
    if (!(units > 0)) return refuse('TRADING_BAD_VOLUME: the order quantity must be positive');
    if (price !== null && !(price > 0)) return refuse('TRADING_BAD_PRICES: a limit or stop order needs its price');
    if (positionId !== null) {
      const position = this.positions.get(positionId);
      if (!position) return refuse(`POSITION_NOT_FOUND: position ${positionId} is not open`);
      if (position.side === side)
        return refuse(`TRADING_BAD_SIDE: an order naming position ${positionId} must be of the other side`);
      if (kind === 'stop' && this.refuseStops !== null) return refuse(this.refuseStops);
    }
    this.push('8', { ...this.report(order, '0', '0'), OrdType: m.OrdType });
    if (kind === 'market') {
      const quote = this.options.prices[symbol]!;
      this.fill({ ...order, kind: 'limit' }, side === 'buy' ? quote.ask : quote.bid, '1');
      return;
    }
    this.resting.set(id, order);
    const quote = this.options.prices[symbol]!;
    this.reach(symbol, quote.bid, quote.ask);
  }

  private fill(order: RestingOrder, price: number, ordType = order.kind === 'stop' ? '3' : '2'): void {
    const closing = order.positionId !== null && ordType === '1';
    const rule =
      order.positionId === null
        ? this.partialFill
        : closing && this.partialClose !== null
          ? { ...this.partialClose, rest: 'cancel' as const }
          : null;
    const split = rule !== null && order.cumUnits === 0 && rule.units < order.units;
    const units = split ? rule.units : order.units - order.cumUnits;
    if (split && units === 0) {
      // Nothing at all filled: the order is cancelled whole (a market order without liquidity).
      this.resting.delete(order.id);
      this.push('8', { ...this.report(order, '4', '4'), OrdType: ordType, Text: 'the order found no liquidity' });
      return;
    }
    let positionId = order.positionId ?? order.opened;
    if (positionId === null) {
      positionId = `${1000 + ++this.seq}`;
      order.opened = positionId;
      this.positions.set(positionId, { id: positionId, symbol: order.symbol, side: order.side, units, price });
    } else if (positionId === order.opened) {
      const position = this.positions.get(positionId);
      if (position) {
        position.price = round((position.price * position.units + price * units) / (position.units + units));
        position.units += units;
      }
    } else {
      const position = this.positions.get(positionId);
      if (position) {
        position.units = Math.max(0, position.units - units);
        if (position.units === 0) this.positions.delete(positionId);
      }
    }
    order.avgPx = round((order.avgPx * order.cumUnits + price * units) / (order.cumUnits + units));
    order.cumUnits += units;
    const leaves = order.units - order.cumUnits;
    if (leaves > 0) this.resting.set(order.id, order);
    else this.resting.delete(order.id);
    this.push('8', {
      ...this.report(order, 'F', leaves > 0 ? '1' : '2'),
      OrdType: ordType,
      LastQty: units,
      LastPx: price,
      PosMaintRptID: positionId,
    });
    if (!this.positions.has(positionId)) this.cancelTied(positionId);
    if (leaves === 0 || ordType !== '1') return;
    // A market order's rest: filled, or cancelled.
    if (rule?.rest === 'fill') return this.fill(order, rule.restPrice ?? price, ordType);
    this.resting.delete(order.id);
    this.push('8', {
      ...this.report(order, '4', '4'),
      OrdType: ordType,
      Text: 'the rest of the order found no liquidity',
      PosMaintRptID: positionId,
    });
  }

  /** The orders protecting a position that is gone are cancelled by the broker. */
  private cancelTied(positionId: string): void {
    for (const order of [...this.resting.values()]) {
      if (order.positionId !== positionId) continue;
      this.resting.delete(order.id);
      this.push('8', { ...this.report(order, '4', '4'), Text: `position ${positionId} closed` });
    }
  }

  private cancelRequest(m: Fields): void {
    const orig = String(m.OrigClOrdID ?? '');
    const order = [...this.resting.values()].find((o) => o.clOrdId === orig || o.id === String(m.OrderID ?? ''));
    if (!order) {
      this.push('9', {
        OrderID: String(m.OrderID ?? 'NONE'),
        ClOrdID: m.ClOrdID,
        OrigClOrdID: orig,
        OrdStatus: '8',
        CxlRejResponseTo: '1',
        CxlRejReason: '1',
        Text: `ORDER_NOT_FOUND: no open order ${orig}`,
      });
      return;
    }
    this.resting.delete(order.id);
    this.push('8', { ...this.report(order, '4', '4'), ClOrdID: m.ClOrdID, OrigClOrdID: order.clOrdId });
  }

  private positionRequest(m: Fields): void {
    const all = [...this.positions.values()];
    if (all.length === 0) {
      this.push('AP', {
        PosReqID: m.PosReqID,
        PosMaintRptID: '0',
        TotalNumPosReports: 0,
        PosReqResult: 2,
        Text: 'no open positions',
      });
      return;
    }
    for (const p of all) {
      this.push('AP', {
        PosReqID: m.PosReqID,
        PosMaintRptID: p.id,
        TotalNumPosReports: all.length,
        PosReqResult: 0,
        Instrument: { Symbol: p.symbol },
        PositionQty: {
          NoPositions: [{ LongQty: p.side === 'buy' ? p.units : 0, ShortQty: p.side === 'sell' ? p.units : 0 }],
        },
        SettlPrice: p.price,
      });
    }
  }

  private massStatus(m: Fields): void {
    const all = [...this.resting.values()];
    if (all.length === 0) {
      this.push('8', {
        MassStatusReqID: m.MassStatusReqID,
        TotNumReports: 0,
        LastRptRequested: true,
        ExecID: `x${++this.seq}`,
        ExecType: 'I',
        OrdStatus: '8',
        OrderID: 'NONE',
      });
      return;
    }
    all.forEach((order, i) => {
      this.push('8', {
        ...this.report(order, 'I', order.cumUnits > 0 ? '1' : '0'),
        OrdType: order.kind === 'stop' ? '3' : '2',
        MassStatusReqID: m.MassStatusReqID,
        TotNumReports: all.length,
        ...(i === all.length - 1 && { LastRptRequested: true }),
      });
    });
  }

  private statusRequest(m: Fields): void {
    const order = [...this.resting.values()].find((o) => o.clOrdId === m.ClOrdID);
    if (order)
      this.push('8', {
        ...this.report(order, 'I', order.cumUnits > 0 ? '1' : '0'),
        OrdType: order.kind === 'stop' ? '3' : '2',
      });
    else
      this.push('8', {
        ClOrdID: m.ClOrdID,
        OrderID: 'NONE',
        ExecID: `x${++this.seq}`,
        ExecType: 'I',
        OrdStatus: '8',
        Text: 'ORDER_NOT_FOUND',
      });
  }

  private report(order: RestingOrder, execType: string, status: string): Fields {
    return {
      OrderID: order.id,
      ClOrdID: order.clOrdId,
      ExecID: `x${++this.seq}`,
      ExecType: execType,
      OrdStatus: status,
      Instrument: { Symbol: order.symbol },
      Side: order.side === 'buy' ? '1' : '2',
      OrderQtyData: { OrderQty: order.units },
      ...(order.kind === 'limit' ? { Price: order.price } : { StopPx: order.price }),
      LeavesQty: status === '0' || status === '1' ? order.units - order.cumUnits : 0,
      CumQty: order.cumUnits,
      AvgPx: order.avgPx,
      TransactTime: new Date(),
      // An entry partly filled names the position its fill opened.
      ...((order.positionId ?? order.opened) !== null && { PosMaintRptID: order.positionId ?? order.opened }),
    };
  }

  private push(type: string, body: Fields): void {
    if (this.tradeCut) return;
    this.tradeSession?.push(type, body);
  }

  /**
   * Ends the trade session from the broker's side (a Logout, as a server restart or a network
   * cut would end it), and loses what the broker says from now until the agent logs on again:
   * with sequence numbers reset at each logon, cTrader resends none of it.
   */
  dropTradeSession(): void {
    const session = this.tradeSession;
    this.tradeCut = true;
    session?.done?.();
  }

  // --- the sessions ---

  private quoteAnswer(session: { push(type: string, body: Fields): void }, type: string, m: Fields): void {
    if (type !== 'V') return;
    const request = m as {
      MDReqID: string;
      SubscriptionRequestType?: string;
      InstrmtMDReqGrp?: { NoRelatedSym?: { Instrument?: { Symbol?: string } }[] };
    };
    const live = (s: (typeof this.subscriptions)[number]) => s.session === session && s.reqId === request.MDReqID;
    if (String(request.SubscriptionRequestType) === '2') {
      this.dropSubscriptions(live);
      return;
    }
    for (const related of request.InstrmtMDReqGrp?.NoRelatedSym ?? []) {
      const symbol = related.Instrument?.Symbol ?? '';
      if (!this.options.prices[symbol]) {
        session.push('Y', { MDReqID: request.MDReqID, MDReqRejReason: '0', Text: `unknown symbol ${symbol}` });
        continue;
      }
      this.snapshot(session, request.MDReqID, symbol);
      if (
        String(request.SubscriptionRequestType) === '1' &&
        !this.subscriptions.some((s) => live(s) && s.symbol === symbol)
      )
        this.subscriptions.push({ session, reqId: request.MDReqID, symbol });
    }
  }

  private snapshot(session: { push(type: string, body: Fields): void }, reqId: string, symbol: string): void {
    const price = this.options.prices[symbol]!;
    session.push('W', {
      MDReqID: reqId,
      Instrument: { Symbol: symbol },
      MDFullGrp: {
        NoMDEntries: [
          { MDEntryType: '0', MDEntryPx: price.bid },
          { MDEntryType: '1', MDEntryPx: price.ask },
        ],
      },
    });
  }

  private dropSubscriptions(which: (s: (typeof this.subscriptions)[number]) => boolean): void {
    for (let i = this.subscriptions.length - 1; i >= 0; i--)
      if (which(this.subscriptions[i]!)) this.subscriptions.splice(i, 1);
  }

  private launch(subId: 'TRADE' | 'QUOTE', port: number, dictionary: string): void {
    // jspurefix constructs the sessions (see fix-acceptor.ts): they reach the broker through these.
    const onTrade = (type: string, m: Fields) => this.onTrade(type, m);
    const quoteAnswer = (session: { push(type: string, body: Fields): void }, type: string, m: Fields) =>
      this.quoteAnswer(session, type, m);
    const sessions = {
      ready: (session: { push(type: string, body: Fields): void }) => {
        if (subId !== 'TRADE') return;
        this.tradeSession = session;
        this.tradeCut = false;
      },
      stopped: (session: unknown) => {
        if (subId === 'TRADE' && this.tradeSession === session) this.tradeSession = null;
        this.dropSubscriptions((s) => s.session === session);
      },
      logon: (user: string, password: string) => {
        this.logons.push({ session: subId, user, password });
        return user === this.options.credentials.user && password === this.options.credentials.password;
      },
    };
    const launcher = launchFixAcceptor(
      {
        name: `ctrader-${subId}`,
        port,
        dictionary,
        senderCompId: 'cServer',
        targetCompId: this.options.agentCompId,
        subId,
      },
      {
        message: (session, type, message) => {
          if (subId === 'TRADE') onTrade(type, message);
          else quoteAnswer(session, type, message);
        },
        ready: sessions.ready,
        stopped: sessions.stopped,
        logon: sessions.logon,
      },
    );
    this.launchers.push(launcher);
  }
}

function round(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}
