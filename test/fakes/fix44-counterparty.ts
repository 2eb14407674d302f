import '../../src/agent/venues/fix/jspurefix-prelude.js';
import jspurefix from 'jspurefix';
import type { IFixMsgStore, IJsFixConfig } from 'jspurefix';
import { launchFixAcceptor, type AcceptorJournal, type AcceptorSession, type FixFields } from './fix-acceptor.js';

/** An order the broker holds or held, in units (lots × contract size). */
export interface Fix44Order {
  orderId: string;
  clOrdId: string;
  symbol: string;
  side: 'buy' | 'sell';
  ordType: '1' | '2' | '3';
  units: number;
  /** Price (limit) or StopPx (stop); null for a market order. */
  price: number | null;
  cumUnits: number;
  avgPx: number;
  /** OrdStatus (39): 0 new, 1 partly filled, 2 filled, 4 cancelled. */
  status: '0' | '1' | '2' | '4';
}

export interface Fix44CounterpartyOptions {
  port: number;
  /** The agent's SenderCompID; the broker's is `BROKER44`. */
  agentCompId: string;
  credentials: { user: string; password: string };
  /** Symbol → quote: market orders fill at it (buy at the ask, sell at the bid); MarketDataRequests get it. */
  prices: Record<string, { bid: number; ask: number }>;
  /** The HeartBtInt of the broker's Logon (default 30). */
  heartbeatSeconds?: number;
  /** Called with every application message the session receives, as it arrives. */
  onMessage?: (type: string, message: FixFields) => void;
}

const COMP_ID = 'BROKER44';

/**
 * A broker speaking plain FIX 4.4 on jspurefix's acceptor side, by the published rules only (no
 * position ids, no vendor messages), on one session that carries orders and quotes:
 *
 * - Logon: 553/554 must match; sequence numbers are kept across connections (141=N) and a
 *   ResendRequest is answered with the application messages themselves (PossDup=Y), including
 *   those the broker sent while the agent was away (numbered and held until it logs on again),
 *   the rest gap-filled. With `gapFillOnly`, the resend is gap fills only (a broker that replays
 *   no business message: what it sent while the agent was away is lost to the agent).
 * - NewOrderSingle market (40=1): new (150=0), then filled at the quote (150=F, 39=2); with
 *   `marketParts` set, first that many units (150=F, 39=1, 151 the rest), then the rest; with
 *   `partialMarket` set, that many units, then the rest cancelled (150=4, 39=4, 14 the part).
 * - NewOrderSingle limit (40=2) or stop (40=3): new (150=0, 39=0) and held; the test fills it
 *   (`fill`), in part (150=F, 39=1, 14 CumQty, 151 LeavesQty, 6 AvgPx) or whole (39=2).
 * - Unknown symbol, no quantity, a limit or stop without its price: rejected (150=8, 39=8, 58).
 * - OrderCancelRequest (35=F): cancelled (150=4, 39=4, 11 the request's, 41 the order's, 14
 *   what filled); an order it does not know: OrderCancelReject (35=9, 102=1); one already filled
 *   or cancelled: OrderCancelReject (102=0, too late). With `holdCancels`, no answer.
 * - OrderStatusRequest (35=H): the order's ExecutionReport (150=I) with its status, CumQty,
 *   LeavesQty and AvgPx; an unknown ClOrdID: 150=I, 39=8, 103=5 (unknown order).
 * - MarketDataRequest (35=V): a snapshot (35=W) of bid and offer; an unknown symbol: 35=Y.
 * - `bust`: the test takes fills back (150=H, trade cancel).
 * - `askResendWithReports`: a ResendRequest ahead of each new order's reports.
 * - `silent`: no Heartbeat; `onTestRequest`: what the broker does first when asked if it is there.
 */
export class Fix44Counterparty {
  readonly logons: { user: string; password: string }[] = [];
  readonly received: { type: string; message: FixFields }[] = [];
  /** Every order received, by OrderID, whatever its state. */
  readonly orders = new Map<string, Fix44Order>();
  /** OrderCancelRequests go unanswered and change nothing, while true (a stalled broker). */
  holdCancels = false;
  /** Resend requests are answered by gap fills only, while true. */
  gapFillOnly = false;
  /** A market order fills this many units first, then the rest (null: whole at once). */
  marketParts: number | null = null;
  /**
   * While set, a market order fills only `units` (150=F, 39=1) and its rest is cancelled (150=4,
   * 39=4, 14 the part); with `units` 0 nothing fills: the order is cancelled whole. A close finding
   * too little liquidity (plain FIX 4.4 has no positions: a close is a market order of the other side).
   */
  partialMarket: { units: number } | null = null;
  /**
   * While true, the broker asks the agent to resend its message 1 (35=2, 7=1, 16=1: a Logon,
   * answered by a gap fill) just before it reports each new order, in the same write: the
   * agent reads the reports while it is still answering the request.
   */
  askResendWithReports = false;
  /** No Heartbeat goes out while true, not even to answer a TestRequest: a broker gone quiet. */
  silent = false;
  /** Called when the agent's TestRequest (35=1) arrives, before the broker answers it. */
  onTestRequest: (() => void) | null = null;
  private session: AcceptorSession | null = null;
  /** OrderID → the ExecID of its last fill, which a bust names (ExecRefID). */
  private readonly lastFill = new Map<string, string>();
  private launcher: { stop(): void } | null = null;
  private seq = 0;
  private readonly journal: AcceptorJournal;
  private readonly sessionStore: InstanceType<typeof jspurefix.MemorySessionStore>;

  constructor(readonly options: Fix44CounterpartyOptions) {
    this.sessionStore = new jspurefix.MemorySessionStore(
      new jspurefix.SessionId('FIX.4.4', COMP_ID, options.agentCompId),
    );
    // The message store needs a jspurefix config only for its logger, which it never uses here.
    const messages: IFixMsgStore = new jspurefix.FixMsgMemoryStore(COMP_ID, {
      logFactory: { logger: () => quiet },
    } as unknown as IJsFixConfig);
    this.journal = {
      sessionStore: { create: () => this.sessionStore },
      messages,
      gapFillOnly: () => this.gapFillOnly,
      sent: (type, body, seqNum) =>
        seqNum === null
          ? this.hold(type, body)
          : void messages
              .put(new jspurefix.FixMsgStoreRecord(type, new Date(), seqNum, body, null))
              .catch(() => undefined),
    };
  }

  /** The session file (`--fix-config`) of an agent on `--venue fix` trading with this broker: dialect fix44, quotes on the trade session. */
  agentConfig(balance: number): object {
    return {
      dialect: 'fix44',
      trade: {
        host: '127.0.0.1',
        port: this.options.port,
        tls: false,
        senderCompId: this.options.agentCompId,
        targetCompId: COMP_ID,
        heartbeatSeconds: 30,
      },
      account: { currency: 'USD', balance },
      instruments: {
        EURUSD: {
          brokerSymbol: 'EURUSD',
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
    this.launcher = launchFixAcceptor(
      {
        name: 'fix44-broker',
        port: this.options.port,
        dictionary: 'qf44',
        senderCompId: COMP_ID,
        targetCompId: this.options.agentCompId,
        subId: '',
        journal: this.journal,
        ...(this.options.heartbeatSeconds !== undefined && { heartbeatSeconds: this.options.heartbeatSeconds }),
      },
      {
        message: (_session, type, message) => this.onMessage(type, message),
        sessionMessage: (_session, type) => {
          if (type === '1') this.onTestRequest?.();
        },
        heartbeats: () => !this.silent,
        logon: (user, password) => {
          this.logons.push({ user, password });
          return user === this.options.credentials.user && password === this.options.credentials.password;
        },
        ready: (session) => {
          this.session = session;
        },
        stopped: (session) => {
          if (this.session === session) this.session = null;
        },
      },
    );
  }

  stop(): void {
    this.launcher?.stop();
  }

  get loggedOn(): boolean {
    return this.session !== null;
  }

  /** The order the agent sent with this ClOrdID. */
  order(clOrdId: string): Fix44Order | undefined {
    return [...this.orders.values()].find((o) => o.clOrdId === clOrdId);
  }

  /** The orders still working (new or partly filled). */
  working(): Fix44Order[] {
    return [...this.orders.values()].filter((o) => o.status === '0' || o.status === '1');
  }

  /** What the account holds in `symbol`, in units (long positive), from every fill. */
  netUnits(symbol: string): number {
    let units = 0;
    for (const o of this.orders.values()) if (o.symbol === symbol) units += o.side === 'buy' ? o.cumUnits : -o.cumUnits;
    return units;
  }

  /**
   * Fills `units` of a held order at `price` (the test plays the market): a part (150=F, 39=1)
   * while some remain, else the fill (39=2). Sent at once, or held for the resend while the agent
   * is away.
   */
  fill(clOrdId: string, units: number, price: number): void {
    const order = this.order(clOrdId);
    if (!order || (order.status !== '0' && order.status !== '1')) throw new Error(`no working order ${clOrdId}`);
    this.execute(order, Math.min(units, order.units - order.cumUnits), price);
  }

  /**
   * Takes back `units` of an order's fills (a bust: the trade is cancelled, as a broker does a
   * trade made in error): ExecutionReport 150=H with ExecRefID the last fill's ExecID, LastQty the
   * units taken back, CumQty what stands. An order left with nothing filled ends cancelled (39=4).
   */
  bust(clOrdId: string, units: number): void {
    const order = this.order(clOrdId);
    if (!order || order.cumUnits < units) throw new Error(`order ${clOrdId} has not filled ${units} units`);
    order.cumUnits -= units;
    if (order.cumUnits === 0) {
      order.avgPx = 0;
      if (order.status === '2') order.status = '4';
    }
    this.push('8', {
      ...this.report(order, 'H', order.status),
      ExecRefID: this.lastFill.get(order.orderId) ?? 'NONE',
      LastQty: units,
      LastPx: order.avgPx,
    });
  }

  // --- what the session answers ---

  private onMessage(type: string, m: FixFields): void {
    this.received.push({ type, message: m });
    this.options.onMessage?.(type, m);
    if (type === 'D') return this.newOrder(m);
    if (type === 'F') return this.holdCancels ? undefined : this.cancelRequest(m);
    if (type === 'H') return this.statusRequest(m);
    if (type === 'V') return this.marketData(m);
    // Anything else is not a message this broker takes.
    this.push('j', { RefMsgType: type, BusinessRejectReason: 3, Text: `unsupported message type ${type}` });
  }

  private newOrder(m: FixFields): void {
    const symbol = String((m.Instrument as FixFields | undefined)?.Symbol ?? '');
    const ordType = String(m.OrdType ?? '');
    const price = ordType === '2' ? Number(m.Price) : ordType === '3' ? Number(m.StopPx) : null;
    const order: Fix44Order = {
      orderId: `B${++this.seq}`,
      clOrdId: String(m.ClOrdID ?? ''),
      symbol,
      side: m.Side === '2' ? 'sell' : 'buy',
      ordType: ordType === '2' || ordType === '3' ? ordType : '1',
      units: Number((m.OrderQtyData as FixFields | undefined)?.OrderQty ?? 0),
      price,
      cumUnits: 0,
      avgPx: 0,
      status: '0',
    };
    const refuse = (text: string) => this.push('8', { ...this.report(order, '8', '8'), OrdRejReason: 99, Text: text });
    if (!this.options.prices[symbol]) return refuse(`unknown symbol ${symbol}`);
    if (ordType !== '1' && ordType !== '2' && ordType !== '3')
      return refuse(`OrdType ${ordType} is not market, limit or stop`);
    if (!(order.units > 0)) return refuse('OrderQty must be positive');
    if (price !== null && !(price > 0)) return refuse('a limit or stop order needs its price');
    this.orders.set(order.orderId, order);
    if (this.askResendWithReports) this.push('2', { BeginSeqNo: 1, EndSeqNo: 1 });
    this.push('8', this.report(order, '0', '0'));
    if (order.ordType !== '1') return;
    const quote = this.options.prices[symbol]!;
    const at = order.side === 'buy' ? quote.ask : quote.bid;
    if (this.partialMarket !== null && this.partialMarket.units < order.units) {
      if (this.partialMarket.units > 0) this.execute(order, this.partialMarket.units, at);
      order.status = '4';
      this.push('8', { ...this.report(order, '4', '4'), Text: 'the rest of the order found no liquidity' });
      return;
    }
    if (this.marketParts !== null && this.marketParts < order.units) this.execute(order, this.marketParts, at);
    this.execute(order, order.units - order.cumUnits, at);
  }

  private execute(order: Fix44Order, units: number, price: number): void {
    order.avgPx = round((order.avgPx * order.cumUnits + price * units) / (order.cumUnits + units));
    order.cumUnits += units;
    order.status = order.cumUnits < order.units ? '1' : '2';
    const report = this.report(order, 'F', order.status);
    this.lastFill.set(order.orderId, String(report.ExecID));
    this.push('8', { ...report, LastQty: units, LastPx: price });
  }

  private cancelRequest(m: FixFields): void {
    const orig = String(m.OrigClOrdID ?? '');
    const order = this.order(orig);
    const refuse = (reason: '0' | '1', text: string) =>
      this.push('9', {
        OrderID: order?.orderId ?? 'NONE',
        ClOrdID: m.ClOrdID,
        OrigClOrdID: orig,
        OrdStatus: order?.status ?? '8',
        CxlRejResponseTo: '1',
        CxlRejReason: reason,
        Text: text,
      });
    if (!order) return refuse('1', `unknown order ${orig}`);
    if (order.status !== '0' && order.status !== '1')
      return refuse('0', `order ${orig} is ${order.status === '2' ? 'filled' : 'cancelled'}: too late to cancel`);
    order.status = '4';
    this.push('8', { ...this.report(order, '4', '4'), ClOrdID: m.ClOrdID, OrigClOrdID: orig });
  }

  private statusRequest(m: FixFields): void {
    const order = this.order(String(m.ClOrdID ?? ''));
    if (order) return this.push('8', this.report(order, 'I', order.status));
    this.push('8', {
      OrderID: 'NONE',
      ClOrdID: m.ClOrdID,
      ExecID: `E${++this.seq}`,
      ExecType: 'I',
      OrdStatus: '8',
      OrdRejReason: 5,
      Instrument: m.Instrument,
      Side: m.Side,
      LeavesQty: 0,
      CumQty: 0,
      AvgPx: 0,
      Text: `unknown order ${String(m.ClOrdID)}`,
    });
  }

  private marketData(m: FixFields): void {
    const request = m as {
      MDReqID: string;
      InstrmtMDReqGrp?: { NoRelatedSym?: { Instrument?: { Symbol?: string } }[] };
    };
    for (const related of request.InstrmtMDReqGrp?.NoRelatedSym ?? []) {
      const symbol = related.Instrument?.Symbol ?? '';
      const price = this.options.prices[symbol];
      if (!price) {
        this.push('Y', { MDReqID: request.MDReqID, MDReqRejReason: '0', Text: `unknown symbol ${symbol}` });
        continue;
      }
      this.push('W', {
        MDReqID: request.MDReqID,
        Instrument: { Symbol: symbol },
        MDFullGrp: {
          NoMDEntries: [
            { MDEntryType: '0', MDEntryPx: price.bid },
            { MDEntryType: '1', MDEntryPx: price.ask },
          ],
        },
      });
    }
  }

  private report(order: Fix44Order, execType: string, status: string): FixFields {
    return {
      OrderID: order.orderId,
      ClOrdID: order.clOrdId,
      ExecID: `E${++this.seq}`,
      ExecType: execType,
      OrdStatus: status,
      Instrument: { Symbol: order.symbol },
      Side: order.side === 'buy' ? '1' : '2',
      OrdType: order.ordType,
      OrderQtyData: { OrderQty: order.units },
      ...(order.ordType === '2' && { Price: order.price }),
      ...(order.ordType === '3' && { StopPx: order.price }),
      LeavesQty: status === '0' || status === '1' ? order.units - order.cumUnits : 0,
      CumQty: order.cumUnits,
      AvgPx: order.avgPx,
      TransactTime: new Date(),
    };
  }

  /** Sent now, or (no session) numbered and held in the journal for the agent's resend request. */
  private push(type: string, body: FixFields): void {
    if (this.session) this.session.push(type, body);
    else this.hold(type, body);
  }

  /** A message for an agent that is away: it takes the next sequence number and waits in the store. */
  private hold(type: string, body: FixFields): void {
    const seqNum = this.sessionStore.senderSeqNum;
    void this.sessionStore.setSenderSeqNum(seqNum + 1);
    void this.journal.messages
      .put(new jspurefix.FixMsgStoreRecord(type, new Date(), seqNum, body, null))
      .catch(() => undefined);
  }
}

const quiet = { info: () => undefined, warning: () => undefined, debug: () => undefined, error: () => undefined };

function round(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}
