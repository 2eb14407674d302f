import {
  partialCloseLots,
  resolveInstrument,
  catalogName,
  type EngineState,
  type InstrumentSpec,
  type Position,
} from '../engine/index.js';
import { clientOrderId } from './client-order-id.js';
import type { Protection, VenueOrderRef, VenuePosition } from './venue.js';

/**
 * The agent's book: the engine's state of the account (positions with their stops, targets,
 * breakeven and trailing rules; pending orders) and, for each of them, the venue orders that
 * carry it out. Plain JSON, so it is written to disk before a signal is acknowledged.
 */
export interface VenueBook {
  state: EngineState;
  /**
   * Position ticket → the venue orders holding its stop and targets, and how often they were
   * replaced. `moving`: a replacement (breakeven, trailing) was decided and written down before
   * the venue was asked: its orders (that revision's client ids) may stand already and `orders`
   * may not be cancelled yet; it is finished before anything else (see finishMoves).
   */
  protection: Record<string, { revision: number; orders: VenueOrderRef[]; moving?: number }>;
  /** Pending-order ticket → the venue's order. */
  orders: Record<string, VenueOrderRef>;
  /** Position ticket → the venue's id of that position, where the venue names positions. */
  positions?: Record<string, string>;
  /**
   * Venue order id of a stop or target that filled → what its fill did, kept (the last
   * `KEPT_EXITS`) so a bust of that fill gives the position its lots back. Absent: none.
   */
  exits?: Record<string, ExitFill>;
}

/** A stop's or target's fill as the book took it: the position before it, and what the fill closed. */
export interface ExitFill {
  /** The position as it stood before the fill (its first fill, when the order filled in parts). */
  position: Position;
  /** The revision of its protection then: a position given back is protected under the next one. */
  revision: number;
  /** The venue's id of the position, where the venue names positions. */
  venueId?: string;
  /** Lots the fill closed, at their average price, and the balance they changed (the close's profit). */
  lots: number;
  price: number;
  profit: number;
}

/** How many exit fills the book keeps for a bust: busts come within the trading day, a few exits later at most. */
export const KEPT_EXITS = 50;

/** `book` with the exit fills `kept` and those `added` since, the oldest dropped past KEPT_EXITS. */
export function withExits(book: VenueBook, kept: VenueBook['exits'], added: VenueBook['exits'] = {}): VenueBook {
  const { exits: _replaced, ...rest } = book;
  const all = { ...kept, ...added };
  const ids = Object.keys(all);
  for (const id of ids.slice(0, Math.max(0, ids.length - KEPT_EXITS))) delete all[id];
  return ids.length === 0 ? rest : { ...rest, exits: all };
}

export function emptyLinks(state: EngineState): VenueBook {
  return { state, protection: {}, orders: {} };
}

export function specOf(state: EngineState, symbol: string): InstrumentSpec {
  // By its catalog name, as the engine looks it up: a mapped ticker's instrument may be known only
  // under the venue's name (BTCUSDT mapped to BTCUSD).
  const spec = resolveInstrument(catalogName(state.config.symbolMap, symbol), state.config.instruments);
  // Positions and orders exist only for instruments the engine knows.
  if (spec === null) throw new Error(`no instrument for ${symbol}`);
  return spec;
}

/** The venue's view of a book position: its symbol, side, lots and protecting orders. */
export function venuePosition(book: VenueBook, position: Position): VenuePosition {
  return {
    id: book.positions?.[String(position.ticket)] ?? `${position.symbol}:${position.side}`,
    symbol: position.symbol,
    side: position.side,
    volume: position.volume,
    price: position.price,
    protection: book.protection[String(position.ticket)]?.orders ?? [],
  };
}

/**
 * The stop and the take-profit orders a position needs now: the targets not reached yet, each
 * closing its share of the original volume floored to the lot step, the last one what remains
 * (the engine's rule, so the venue closes what the engine would).
 */
export function protectionOf(book: VenueBook, position: Position, revision: number): Protection {
  const spec = specOf(book.state, position.symbol);
  const targets: Protection['targets'] = [];
  let open = position.volume;
  let share = position.tp.slice(0, position.tpNext).reduce((sum, level) => sum + level.pct, 0);
  for (const level of position.tp.slice(position.tpNext)) {
    if (open <= 0) break;
    share += level.pct;
    const lots = share >= 100 - 1e-9 ? open : partialCloseLots((position.originalVolume * level.pct) / 100, open, spec);
    if (lots <= 0) continue;
    targets.push({ price: level.price, volume: lots });
    open = Math.max(0, open - lots);
  }
  const signalId = position.signalId ?? `position-${position.ticket}`;
  return {
    clientId: clientOrderId(signalId, `p${position.ticket}r${revision}`),
    stop: position.sl,
    targets,
    replaces: book.protection[String(position.ticket)]?.orders ?? [],
  };
}
