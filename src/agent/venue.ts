import type { FillRules, InstrumentSpec, Quote, Side } from '../engine/index.js';
import type { LedgerFunding } from '../protocol/ledger-report.js';

/**
 * Where the agent executes: the paper account, a crypto exchange through CCXT, a FIX broker.
 * The engine decides (sizing, stop and take-profit prices and shares, breakeven, trailing); a
 * venue carries the decisions out and reports what happened. Volumes are the engine's lots of
 * the venue's instrument (see `instrument()`), prices the venue's. Symbols are the venue's own
 * (after the agent's symbol map).
 *
 * Every method that talks to the venue throws VenueRefusedError when the venue refused the
 * request (its reason becomes the signal's outcome) and VenueUnreachableError when it could not
 * be reached (the agent retries with backoff and never acknowledges the signal meanwhile).
 */
export interface Venue {
  /** `paper`, `ccxt:binanceusdm`…: for logs and the published state. */
  readonly name: string;
  /**
   * The venue keeps one net position per symbol (an exchange account in one-way mode): an
   * order against an open position reduces it instead of opening a position of its own.
   */
  readonly netsPositions: boolean;
  /**
   * The venue can hold only one closing order for the same holding (a spot market, where each
   * open sell order locks the coins it sells): a stop loss and a take-profit cannot both stand,
   * so a signal asking for both is refused before anything is sent. Absent: false.
   */
  readonly oneExitOrder?: boolean;
  /**
   * Who fills the pending entries (limit and stop orders) and the positions' stops and targets
   * this venue holds. `venue`: the broker or exchange fills its own orders and says so through
   * `reports()`; the agent's quotes leave them alone, so a quote crossing an entry's price never
   * makes a position the venue has not reported (with the venue's price, lots and position id),
   * and a quote reaching a target never closes lots the venue's report closes again. `engine`:
   * the account is a simulation (paper, dry run), or (exits on CCXT) the venue reports no such
   * fills and the agent sees them at its quotes, then asks the venue what it still holds.
   */
  readonly fills: FillRules;
  /**
   * How many signals of different symbols the agent carries out at once on this venue (default
   * 16); the venue's own client keeps to its request rate limits beneath that.
   */
  readonly concurrentSignals?: number;
  /**
   * Connects, loads the instruments and reads what the venue holds, before any signal is
   * taken. Resolves with the positions and open orders this agent owns (client ids it made).
   */
  open(): Promise<VenueHoldings>;
  /** Balance, equity, currency, positions and open orders, as the venue reports them. */
  account(): Promise<VenueAccount>;
  /**
   * Balance, equity and currency only: what sizing needs before each signal, cheaper than the
   * whole account. `symbol`: in the currency that market settles in (the account's main one without).
   * `reread`: a venue that answers from data it holds (CCXT) adds a sentence here when what it
   * held was older than its bound and it read again; the signal's outcome carries it.
   */
  funds(symbol?: string, reread?: string[]): Promise<VenueFunds>;
  /** The instrument as the venue defines it (tick, lot step, minimum, maximum, contract size); null: unknown. */
  instrument(symbol: string): InstrumentSpec | null;
  /**
   * The venue symbol a signal symbol names when the symbol map does not say (CCXT: the market
   * whose exchange id is `BTCUSDT`); null: none. Optional: venues without their own names skip it.
   */
  findSymbol?(signalSymbol: string): string | null;
  /** The current bid and ask (held by the venue where it keeps them fresh); `reread` as in `funds`. */
  quote(symbol: string, reread?: string[]): Promise<Quote>;
  /** Places a market, limit or stop order. Placing a client id the venue already has answers that order. */
  place(order: OrderRequest): Promise<VenueOrder>;
  /**
   * The order with this request's client id as the venue has it, or null when the venue has none;
   * sends nothing. For an entry whose signal expired after it may have been sent (a lost answer, a
   * restart): one that stands or filled is the signal's outcome, and no new one may leave.
   */
  find(order: OrderRequest): Promise<VenueOrder | null>;
  /**
   * Attaches the stop and take-profit orders of a position, or moves them: what the position
   * had before (`protection.replaces`) is cancelled once the new orders stand.
   */
  protect(position: VenuePosition, protection: Protection): Promise<VenueOrder[]>;
  /** Closes `volume` lots of a position (all of it when equal to its volume) at the market. */
  close(position: VenuePosition, volume: number, clientId: string, mayExist?: boolean): Promise<VenueOrder>;
  /**
   * Cancels an open order; an order that is no longer open is not an error. May answer the order
   * as the cancel left it (what filled of it before), where the venue says.
   */
  cancel(order: VenueOrderRef): Promise<VenueOrder | void>;
  /**
   * Fills and closes the venue made on its own (a pending entry filled, a stop or target hit)
   * since the last call. Where `fills` says `venue`, the only way such a fill reaches the book.
   * `streamed`: only the orders the venue's stream named since the last call (see `onReports`).
   */
  reports(options?: { streamed?: boolean }): Promise<VenueReport[]>;
  /**
   * The book's stops and targets the venue no longer lists open (ended while the agent was away,
   * or between two reads), followed from now as the venue's own: the next `reports()` looks each
   * up by its id and reports what it filled, so a stop filled unseen closes its position at the
   * venue's price (and reaches the ledger) rather than being taken for cancelled and placed again,
   * or, where positions are listed, dropped with its position as closed unseen. Orders followed
   * already, or found ended by an earlier look-up, are left as they are. Optional: where absent
   * nothing is looked up.
   */
  followEnded?(orders: EndedExit[]): void;
  /**
   * Of the orders `followEnded` handed over and still handed over, those its look-up found ended
   * with nothing filled (cancelled, expired, or unknown to the venue): gone for certain, so the
   * reconciliation places the position's stop and targets again even where a stop merely missing
   * from the open orders is not taken for gone (swaps). Optional: where absent, none.
   */
  endedUnfilled?(): ReadonlySet<string>;
  /**
   * Of the same orders, those found ended (cancelled, expired) after filling part of their lots,
   * that part reported already (the book took it as an exit): id → lots filled. Gone for certain
   * too: a position whose book still names one (the stop for its rest refused) gets its stop and
   * targets placed again. Optional: where absent, none.
   */
  endedInPart?(): ReadonlyMap<string, number>;
  /**
   * A venue with a stream of its own events (an exchange's private stream) calls `wake`:
   * `reports` when reports wait, so the agent takes them at once rather than at its next
   * management pass; `connected` when the stream (re)connected, since what happened while it was
   * down is known only by reading: the agent reconciles at once. Optional.
   */
  onReports?(wake: (why: 'reports' | 'connected') => void): void;
  /**
   * The funding payments the venue booked on the account's positions at `since` (epoch ms) or
   * later, oldest first, each keyed by the venue's id. Read in the background, never in front of
   * an order. Optional: a venue without it books no funding (paper, FIX) or reports none.
   */
  funding?(since: number): Promise<LedgerFunding[]>;
  /** What the venue says of its connections (FIX: each session's state and latest events), for the published state. Optional. */
  status?(): Record<string, unknown>;
  /** Releases connections. */
  shutdown(): Promise<void>;
}

export type VenueOrderKind = 'market' | 'limit' | 'stop';

export interface OrderRequest {
  /** Derived from the signal id, so a retry or a restart cannot place it twice. */
  clientId: string;
  symbol: string;
  side: Side;
  kind: VenueOrderKind;
  /** Lots. */
  volume: number;
  /** Limit or trigger price; null for market orders. */
  price: number | null;
  /**
   * The order may have been placed already (the signal is executed again after a lost answer or
   * a restart): the venue looks the client id up first, and answers the order it finds.
   */
  mayExist?: boolean;
}

/** A stop loss and take-profit levels, each a reduce-only order held by the venue. */
export interface Protection {
  /** Derived from the signal id and the step, e.g. `…-sl2`; each order adds its suffix. */
  clientId: string;
  stop: number | null;
  /** Target prices with the lots each closes, nearest first. */
  targets: { price: number; volume: number }[];
  /** The venue orders of the protection being replaced (moving a stop). */
  replaces: VenueOrderRef[];
  /** As OrderRequest.mayExist. */
  mayExist?: boolean;
}

export interface VenueOrderRef {
  id: string;
  symbol: string;
  /** A conditional (trigger) order, which some exchanges keep and cancel apart from plain ones. */
  trigger?: boolean;
}

/** A stop or target of the book that the venue no longer lists open (see `Venue.followEnded`). */
export interface EndedExit extends VenueOrderRef {
  kind: 'stop_loss' | 'take_profit';
  /** The side the order trades: the opposite of its position's. */
  side: Side;
  /** Lots of its fills the book has taken already (a fill in part before): only more are reported. */
  filled: number;
}

export interface VenueFill {
  price: number;
  /** Lots. */
  volume: number;
  time: string | null;
  fee: { cost: number; currency: string } | null;
}

/** An order as the venue reported it: what the acknowledgement's `result` carries. */
export interface VenueOrder {
  id: string;
  clientId: string | null;
  symbol: string;
  side: Side;
  kind: VenueOrderKind | 'stop_loss' | 'take_profit';
  /** Lots ordered. */
  volume: number;
  /** Limit or trigger price; null for market orders. */
  price: number | null;
  status: 'open' | 'filled' | 'cancelled' | 'rejected';
  /** Lots filled so far, and their average price (null when nothing filled). */
  filled: number;
  average: number | null;
  fills: VenueFill[];
  /**
   * A buy whose fee the venue took from the coins bought (a spot market's commission in the base
   * coin): `kept`, the lots of `filled` the account holds after it, rounded down to the lot step,
   * is what the position holds, and what its stop, targets and close sell; `dust`, below one step,
   * stays in the account outside the book (the exchange cannot sell it). Absent: all of `filled`.
   */
  feeInCoin?: { kept: number; fee: number; coin: string; dust: number };
  /** The venue's words for why the order ended cancelled or rejected, when it gave them. */
  reason?: string;
  /**
   * Set when the venue cannot tell what the order did: a close sent before the agent stopped
   * whose position is gone at the venue, which forgot the order, while its stop or target may
   * have closed it as well. Says why; `filled` and `status` then mean nothing.
   */
  uncertain?: string;
  trigger?: boolean;
  /** The venue's id of the position this order opened or closes, where the venue names positions (cTrader's PosMaintRptID). */
  positionId?: string;
}

export interface VenuePosition {
  /** The venue's id for the position, or the symbol and side where positions have none. */
  id: string;
  symbol: string;
  side: Side;
  /** Lots. */
  volume: number;
  price: number;
  /** The stop and target orders protecting it. */
  protection: VenueOrderRef[];
}

export interface VenueFunds {
  balance: number;
  equity: number;
  currency: string;
}

/**
 * What the agent reconciles its book with, every few seconds: every open order of this agent's
 * client ids (conditional ones included), and the positions with their sizes; `positions` null
 * where the venue cannot list them (spot, plain FIX 4.4), which leaves the book's positions as they are.
 */
export interface VenueAccount extends VenueFunds {
  positions: VenuePosition[] | null;
  orders: VenueOrder[];
  /** A spot market's coins, which the book's buy positions must be covered by (see CoinHoldings). */
  coins?: CoinHoldings;
}

/** What the venue holds of this agent's making when the agent starts. */
export interface VenueHoldings {
  /** null: the venue has no positions to compare (a spot market holds coins, not positions). */
  positions: VenuePosition[] | null;
  orders: VenueOrder[];
  /** With `positions` null on a spot market: the coins, which cover the book's buy positions. */
  coins?: CoinHoldings;
}

/**
 * A spot account's coins, where the venue holds coins rather than positions. A buy position of
 * the book is coins of the market's base: the book's buy positions of a coin must be covered by
 * what the account holds of it. More coins than the book's are the trader's own, not positions.
 */
export interface CoinHoldings {
  /** Each coin's total: free, and locked in open orders (a stop or target locks what it sells). */
  held: Record<string, number>;
  /** Each market's base coin, the coin a buy of it holds. */
  baseOf: Record<string, string>;
}

/** Something the venue did on its own: a pending entry filled, a stop or a target closed (part of) a position, a fill taken back. */
export type VenueReport =
  | {
      /**
       * The venue took back `lots` of an order's fills (a bust: FIX ExecType H, trade cancel):
       * they never were. An entry's: the position they opened shrinks by them (leaves the book
       * at 0). A stop's or target's: the position they closed holds them again.
       */
      type: 'fill_busted';
      /** The order as the venue has it after the bust: `filled` counts what still stands. */
      order: VenueOrder;
      lots: number;
      /**
       * The order's filled lots when the fill taken back was made (the fill the venue named: FIX
       * ExecRefID). Absent: its latest fill, the lots standing now plus those taken back.
       */
      bustedAt?: number;
      /** With `bustedAt`: the lots of that fill taken back so far, this bust's included. */
      bustedInAll?: number;
    }
  | {
      type: 'entry_filled';
      /** The order as the venue has it now: `filled` and `average` count all its fills so far. */
      order: VenueOrder;
      /**
       * The rest of the entry still stands at the venue, and its later fills are reported as they
       * come (the position grows). Absent: the entry is done (filled, or its rest cancelled).
       */
      working?: boolean;
    }
  | {
      type: 'position_reduced';
      symbol: string;
      side: Side;
      volume: number;
      price: number | null;
      by: 'stop_loss' | 'take_profit' | 'venue';
      order: VenueOrder | null;
    };

/** The venue refused a request; `message` is its reason, as it gave it. */
export class VenueRefusedError extends Error {
  override readonly name = 'VenueRefusedError';
  /**
   * The venue cancelled the position's stop and targets before it refused the close (a spot
   * close first frees the coins they lock): the position is no longer protected there.
   */
  readonly protectionCancelled: boolean;

  constructor(message: string, options?: ErrorOptions & { protectionCancelled?: boolean }) {
    super(message, options);
    this.protectionCancelled = options?.protectionCancelled === true;
  }
}

/** The venue could not be reached (network, maintenance, rate limit): retry later. */
export class VenueUnreachableError extends Error {
  override readonly name = 'VenueUnreachableError';
}
