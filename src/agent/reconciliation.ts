import { applyFill, type PendingOrder, type Position, type Side } from '../engine/index.js';
import { clientOrderId, isOwnClientOrderId } from './client-order-id.js';
import type { VenueHoldings, VenueOrder, VenueOrderRef, VenuePosition } from './venue.js';
import type { VenueBook } from './venue-book.js';

/** Lots closer than this are equal (venues round lots to their step; floats add the rest). */
const LOTS_EPSILON = 1e-9;

/** A holding at the venue the book does not carry: published, logged at error, never dropped in silence. */
export interface NotManaged {
  kind: 'position' | 'order';
  /** The venue's id of the position or order. */
  id: string;
  clientId: string | null;
  symbol: string;
  side: Side;
  /** Lots the book does not carry (for a position larger at the venue than in the book: the excess). */
  volume: number;
  price: number | null;
  reason: string;
}

/** Something reconciliation changed or saw, for the log: `error` is money at stake the agent cannot fix. */
export interface Finding {
  level: 'error' | 'warn' | 'info';
  message: string;
  fields: Record<string, unknown>;
}

/** A position the venue no longer holds, as the book had it (with its venue links). */
export interface DroppedPosition {
  position: Position;
  venueId?: string;
  protection?: VenueBook['protection'][string];
}

/** A pending order the venue no longer lists and holds no position of (cancelled or expired there), as the book had it. */
export interface DroppedOrder {
  order: PendingOrder;
  ref: VenueOrderRef;
}

export interface Reconciled {
  book: VenueBook;
  notManaged: NotManaged[];
  /** Orders to cancel at the venue: the leftover stop and targets of positions gone, orphans of our client ids. Each once: they leave the book here. */
  cancel: VenueOrderRef[];
  /** Positions that left the book because the venue holds them no more. */
  dropped: DroppedPosition[];
  /** Pending orders that left the book because the venue lists them no more and holds nothing they opened. */
  droppedOrders: DroppedOrder[];
  /** Positions whose stop and targets must be placed (again): entries adopted, positions reduced, protection gone from the venue. */
  reprotect: number[];
  /** Pending entries the venue filled in part and still holds open: ticket → lots filled. */
  partlyFilled: Record<string, number>;
  findings: Finding[];
}

/**
 * The book made the projection of what the venue holds (`holdings`), the venue being the truth.
 * Pure: the caller carries out `cancel` and `reprotect`, logs `findings` and publishes `notManaged`.
 *
 * Positions are compared by the venue's position id where the book has it, else by symbol and
 * side, and by size:
 * - gone at the venue: the position leaves the book and its stop and targets are cancelled;
 * - smaller at the venue: the book's position shrinks to it (the newest positions of the symbol
 *   and side first) and gets a stop and targets of its new size; while a signal is in flight
 *   (`settling`) it is left as it is: that signal settles it;
 * - larger, or only at the venue: a pending entry of the same symbol and side that the venue no
 *   longer lists was filled while the agent did not look: it is adopted as a position (and
 *   protected); what is left over is not managed.
 * Where the venue cannot list positions (`positions: null`: plain FIX), positions are kept. On a
 * spot market (`coins`) the book's buy positions of a coin are cut down to what the account holds
 * of it (free and locked), those whose stop or target no longer stands first (an open sell order
 * locks its coins), then the newest; coins beyond them are the trader's, not managed ones.
 * The cut ones' stop and targets are cancelled, or placed again for the lots left.
 * A position the venue still holds (on spot: a buy covered by the coins) none of whose stop and
 * targets is open any more gets them placed again, said at error; so does one whose stop is gone
 * while a target still stands (the targets are placed again with it). Off spot a stop missing from
 * the open orders counts as gone only when the venue's look-up found it ended with nothing
 * filled (`endedUnfilled`), or ended after filling part, that part taken already (`endedInPart`):
 * some exchanges list conditional orders apart, or not at all.
 *
 * Orders are compared by venue id and client id. A pending entry gone and not adopted leaves
 * the book. An open order the book does not know is not managed, except the stop or target of a
 * position of ours that is gone (its client id names the position): cancelled, unless the venue
 * still holds an unmanaged position it may protect; an older revision of a position's stop or
 * target (a move whose cancel was lost) is cancelled too.
 */
export function reconcile(
  book: VenueBook,
  holdings: VenueHoldings,
  options: {
    settling?: boolean;
    endedUnfilled?: ReadonlySet<string>;
    endedInPart?: ReadonlyMap<string, number>;
  } = {},
): Reconciled {
  const state = book.state;
  const protection = { ...book.protection };
  const pendingRefs = { ...book.orders };
  const links: Record<string, string> = { ...book.positions };
  const findings: Finding[] = [];
  const notManaged: NotManaged[] = [];
  const cancel: VenueOrderRef[] = [];
  const dropped: DroppedPosition[] = [];
  const droppedOrders: DroppedOrder[] = [];
  const reprotect = new Set<number>();
  const partlyFilled: Record<string, number> = {};

  // --- pending entries: open at the venue, or gone ---
  const openById = new Map(holdings.orders.map((o) => [o.id, o]));
  const openByClient = new Map(holdings.orders.filter((o) => o.clientId !== null).map((o) => [o.clientId!, o]));
  const claimedOrders = new Set<string>();
  let orders = [...state.orders];
  const gone: typeof orders = [];
  for (const order of state.orders) {
    const ref = pendingRefs[String(order.ticket)];
    if (ref === undefined) continue; // not sent yet (a dry run's, or a signal in flight): nothing to compare
    const clientId = order.signalId === null ? null : clientOrderId(order.signalId, 'o');
    const open = openById.get(ref.id) ?? (clientId === null ? undefined : openByClient.get(clientId));
    if (open) {
      claimedOrders.add(open.id);
      if (open.filled > LOTS_EPSILON) {
        partlyFilled[String(order.ticket)] = open.filled;
        findings.push({
          level: 'warn',
          message: `pending order ${order.ticket} is filled in part at the venue (${open.filled} of ${open.volume} lots) and still open`,
          fields: {
            order: order.ticket,
            venueOrder: open.id,
            symbol: order.symbol,
            filled: open.filled,
            volume: order.volume,
          },
        });
      }
      continue;
    }
    gone.push(order);
  }

  // --- positions ---
  let positions = [...state.positions];
  let nextState = { ...state };
  const shrink = (ticket: number, volume: number, why: string, venueId?: string) => {
    const was = positions.find((p) => p.ticket === ticket)!;
    // A signal in flight (a close sent before a restart) may be what made it smaller: executed
    // again, it looks up what its order did and reduces the book itself; shrinking it here too
    // would make it close the rest a second time. The next comparison, once it settled, follows.
    if (options.settling === true) return;
    positions = positions.map((p) => (p.ticket === ticket ? { ...p, volume } : p));
    reprotect.add(ticket);
    findings.push({
      level: 'warn',
      message: `position ${ticket} is smaller at the venue (${volume} of ${was.volume} lots): ${why}; the book follows, and its stop and targets are placed again for ${volume}`,
      fields: {
        position: ticket,
        venuePosition: venueId,
        symbol: was.symbol,
        side: was.side,
        volume: was.volume,
        venueVolume: volume,
      },
    });
  };
  const drop = (
    position: Position,
    message = 'the venue no longer holds this position (closed there: its stop, a target, or by hand); it leaves the book and its other orders are cancelled',
  ) => {
    const key = String(position.ticket);
    const held = protection[key];
    dropped.push({
      position,
      ...(links[key] !== undefined && { venueId: links[key] }),
      ...(held && { protection: held }),
    });
    cancel.push(...(held?.orders ?? []));
    findings.push({
      level: 'warn',
      message,
      fields: {
        position: position.ticket,
        venuePosition: links[key],
        symbol: position.symbol,
        side: position.side,
        volume: position.volume,
        cancelled: (held?.orders ?? []).map((o) => o.id),
      },
    });
    positions = positions.filter((p) => p.ticket !== position.ticket);
    delete protection[key];
    delete links[key];
  };
  /** The book's `mine` (one symbol and side, or one coin) cut down to `venueLots`, in the order given (the first goes first). */
  const cutTo = (mine: Position[], venueLots: number, why: string, venueId?: string, dropMessage?: string) => {
    let bookLots = mine.reduce((sum, p) => sum + p.volume, 0);
    for (const position of mine) {
      if (bookLots <= venueLots + LOTS_EPSILON) break;
      const excess = bookLots - venueLots;
      if (position.volume <= excess + LOTS_EPSILON) {
        drop(position, dropMessage);
        bookLots -= position.volume;
      } else {
        shrink(position.ticket, round(position.volume - excess), why, venueId);
        bookLots = venueLots;
      }
    }
  };
  if (holdings.positions !== null) {
    const venue = holdings.positions;
    const byId = new Map(venue.map((p) => [p.id, p]));
    const claimedVenue = new Set<string>();
    // Positions the book names by the venue's id.
    for (const position of state.positions) {
      const id = links[String(position.ticket)];
      if (id === undefined) continue;
      const held = byId.get(id);
      if (!held) {
        drop(position);
        continue;
      }
      claimedVenue.add(id);
      if (held.volume < position.volume - LOTS_EPSILON)
        shrink(position.ticket, held.volume, 'closed in part there', id);
      else if (held.volume > position.volume + LOTS_EPSILON) {
        notManaged.push({
          kind: 'position',
          id,
          clientId: null,
          symbol: held.symbol,
          side: held.side,
          volume: round(held.volume - position.volume),
          price: held.price,
          reason: `the venue's position ${id} is larger than the book's position ${position.ticket} (${held.volume} against ${position.volume} lots)`,
        });
      }
    }
    // The others by symbol and side, in sum: a netting venue holds one position per side.
    const keys = new Set([
      ...state.positions.filter((p) => links[String(p.ticket)] === undefined).map((p) => `${p.symbol}:${p.side}`),
      ...venue.filter((p) => !claimedVenue.has(p.id)).map((p) => `${p.symbol}:${p.side}`),
    ]);
    for (const key of keys) {
      const mine = positions
        .filter((p) => links[String(p.ticket)] === undefined && `${p.symbol}:${p.side}` === key)
        .sort((a, b) => a.ticket - b.ticket);
      const theirs = venue.filter((p) => !claimedVenue.has(p.id) && `${p.symbol}:${p.side}` === key);
      const venueLots = theirs.reduce((sum, p) => sum + p.volume, 0);
      const bookLots = mine.reduce((sum, p) => sum + p.volume, 0);
      if (venueLots < bookLots - LOTS_EPSILON) {
        // The newest go first: what a venue closes by hand or by its stop is the net position, not a ticket.
        cutTo([...mine].reverse(), venueLots, 'closed in part there', theirs[0]?.id);
        continue;
      }
      let excess = venueLots - bookLots;
      if (excess <= LOTS_EPSILON) continue;
      // A pending entry gone from the venue whose lots are there: filled while the agent did not look.
      for (const order of gone.filter((o) => `${o.symbol}:${o.side}` === key)) {
        if (excess <= LOTS_EPSILON) break;
        const lots = round(Math.min(order.volume, excess));
        const price = theirs.length === 1 ? theirs[0]!.price : order.price;
        const step = applyFill(
          { ...nextState, positions, orders },
          { type: 'order_filled', order: order.ticket, price, volume: lots < order.volume ? lots : null },
          Date.now(),
        );
        const opened = step.events.find((e) => e.type === 'opened');
        if (!opened || opened.type !== 'opened') continue;
        nextState = step.state;
        positions = [...step.state.positions];
        orders = [...step.state.orders];
        delete pendingRefs[String(order.ticket)];
        gone.splice(gone.indexOf(order), 1);
        if (theirs.length === 1 && !venueNamesBySide(theirs[0]!)) links[String(opened.position)] = theirs[0]!.id;
        reprotect.add(opened.position);
        excess -= lots;
        findings.push({
          level: 'warn',
          message: `pending order ${order.ticket} was filled at the venue while the agent did not look (${lots} lots at ${price}): it is now position ${opened.position}, and gets its stop and targets`,
          fields: {
            order: order.ticket,
            position: opened.position,
            symbol: order.symbol,
            side: order.side,
            volume: lots,
            price,
          },
        });
      }
      if (excess <= LOTS_EPSILON) continue;
      // Split at the last colon: a CCXT swap's symbol holds one too (BTC/USDT:USDT).
      const cut = key.lastIndexOf(':');
      const symbol = key.slice(0, cut);
      const side = key.slice(cut + 1) as Side;
      const id = theirs.length === 1 ? theirs[0]!.id : key;
      notManaged.push({
        kind: 'position',
        id,
        clientId: null,
        symbol,
        side,
        volume: round(excess),
        price: theirs.length === 1 ? theirs[0]!.price : null,
        reason:
          bookLots > 0
            ? `the venue holds ${round(venueLots)} lots ${side} ${symbol}, the book ${round(bookLots)}`
            : `the venue holds ${round(venueLots)} lots ${side} ${symbol} that the book does not`,
      });
    }
  } else if (holdings.coins !== undefined) {
    // A spot market: the book's buy positions of a coin must be covered by what the account
    // holds of it. Less: sold outside the agent, or an exit filled unseen; the book follows.
    // More is the trader's own, never a position to manage. A sell there (no shorts on spot)
    // is coins the account held before: nothing to compare it with.
    // An open sell order locks the coins it sells: a position whose stop or target still stands
    // holds its coins, so those without one go first, then the newest.
    const { held, baseOf } = holdings.coins;
    const open = new Set(holdings.orders.map((o) => o.id));
    const locked = (p: Position) => protection[String(p.ticket)]?.orders.some((o) => open.has(o.id)) === true;
    const coins = new Set(
      positions.filter((p) => p.side === 'buy' && baseOf[p.symbol] !== undefined).map((p) => baseOf[p.symbol]!),
    );
    for (const coin of [...coins].sort()) {
      const mine = positions
        .filter((p) => p.side === 'buy' && baseOf[p.symbol] === coin)
        .sort((a, b) => Number(locked(a)) - Number(locked(b)) || b.ticket - a.ticket);
      const coverLots = Math.max(0, held[coin] ?? 0);
      const bookLots = mine.reduce((sum, p) => sum + p.volume, 0);
      if (coverLots >= bookLots - LOTS_EPSILON) continue;
      cutTo(
        mine,
        coverLots,
        `the account holds ${round(coverLots)} ${coin}, the book's buy positions ${round(bookLots)} (sold outside the agent, an exit filled unseen, or a fee taken in ${coin})`,
        coin,
        `the account no longer holds the ${coin} of this position (${round(coverLots)} held, the book's buy positions ${round(bookLots)}: sold outside the agent, or an exit filled unseen); it leaves the book and its other orders are cancelled`,
      );
    }
  }

  // Pending entries gone and not adopted: filled or cancelled at the venue, unknown which.
  for (const order of gone) {
    const ref = pendingRefs[String(order.ticket)];
    orders = orders.filter((o) => o.ticket !== order.ticket);
    delete pendingRefs[String(order.ticket)];
    if (ref !== undefined) droppedOrders.push({ order, ref });
    findings.push({
      level: 'warn',
      message:
        holdings.positions === null
          ? 'the venue no longer has this pending order (filled or cancelled there), and cannot list positions to tell which; it leaves the book'
          : 'the venue no longer has this pending order and holds no position it opened (cancelled or expired there); it leaves the book',
      fields: {
        order: order.ticket,
        venueOrder: ref?.id,
        symbol: order.symbol,
        side: order.side,
        volume: order.volume,
      },
    });
  }

  // --- open orders the book does not know ---
  const known = new Set<string>([
    ...Object.values(pendingRefs).map((o) => o.id),
    ...Object.values(protection).flatMap((p) => p.orders.map((o) => o.id)),
    ...claimedOrders,
  ]);
  const owners = positions.map((p) => ({
    position: p,
    prefix: clientOrderId(p.signalId ?? `position-${p.ticket}`, `p${p.ticket}r`),
  }));
  const unmanagedSides = new Set(notManaged.filter((n) => n.kind === 'position').map((n) => `${n.symbol}:${n.side}`));
  for (const order of holdings.orders) {
    if (known.has(order.id) || cancel.some((c) => c.id === order.id)) continue;
    const ref = orderRef(order);
    const exit = protectionRevision(order.clientId);
    if (exit !== null) {
      const owner = owners.find((o) => order.clientId!.startsWith(o.prefix));
      if (owner) {
        const held = protection[String(owner.position.ticket)];
        if (held?.moving === exit) continue; // the move under way: finishMoves finds it by its client id
        if (held !== undefined && exit < held.revision) {
          cancel.push(ref);
          findings.push({
            level: 'warn',
            message: `order ${order.id} is an earlier stop or target of position ${owner.position.ticket} (revision ${exit}, the book's is ${held.revision}), left standing by a move: cancelled`,
            fields: { venueOrder: order.id, clientId: order.clientId, symbol: order.symbol },
          });
          continue;
        }
      } else {
        const protectedSide: Side = order.side === 'buy' ? 'sell' : 'buy';
        const mayProtect = unmanagedSides.has(`${order.symbol}:${protectedSide}`);
        if (!mayProtect) {
          cancel.push(ref);
          findings.push({
            level: 'error',
            message: `order ${order.id} (${order.clientId}) is the stop or target of a position of this agent that is gone: cancelled, so it cannot close or open anything later`,
            fields: {
              venueOrder: order.id,
              clientId: order.clientId,
              symbol: order.symbol,
              side: order.side,
              volume: order.volume,
              price: order.price,
            },
          });
          continue;
        }
      }
    }
    notManaged.push({
      kind: 'order',
      id: order.id,
      clientId: order.clientId,
      symbol: order.symbol,
      side: order.side,
      volume: round(order.volume - order.filled),
      price: order.price,
      reason: isOwnClientOrderId(order.clientId)
        ? exit !== null
          ? 'a stop or target of this agent the book does not hold, kept because the venue holds a position the book does not manage'
          : 'an order of this agent the book does not hold (placed before the agent stopped, and not written down); a signal executed again finds it by its client id'
        : 'an order the book does not hold',
    });
  }

  // --- protection the venue no longer has, on positions it still holds ---
  // On spot, the buys left after the cut above are the coins held, and the account's open orders
  // list its stops (each locks the coins it sells): a stop missing there is gone.
  const baseOf = holdings.positions === null ? holdings.coins?.baseOf : undefined;
  if (holdings.positions !== null || baseOf !== undefined) {
    const open = new Set(holdings.orders.map((o) => o.id));
    const unfilled = options.endedUnfilled ?? new Set<string>();
    const inPart = options.endedInPart ?? new Map<string, number>();
    const ended = new Set([...unfilled, ...inPart.keys()]);
    for (const position of positions) {
      if (baseOf !== undefined && (position.side !== 'buy' || baseOf[position.symbol] === undefined)) continue;
      const held = protection[String(position.ticket)];
      // Conditional orders some exchanges list apart, or not at all: a stop not listed there is
      // not a stop gone, unless the venue's look-up found it ended (with nothing filled, or after
      // filling part, that part taken as an exit).
      if (
        !held ||
        held.moving !== undefined ||
        held.orders.length === 0 ||
        (baseOf === undefined && held.orders.some((o) => o.trigger && !ended.has(o.id))) ||
        reprotect.has(position.ticket)
      )
        continue;
      // The stop gone for certain (on spot: not among the open orders, the look-ups before this
      // comparison having found it not filled; off spot: found ended by its look-up) leaves
      // the position unprotected though a target stands: placed again too, the targets with it.
      const stopsGone = held.orders.filter(
        (o) => o.trigger && !open.has(o.id) && (baseOf !== undefined || ended.has(o.id)),
      );
      const standing = held.orders.filter((o) => open.has(o.id));
      if (standing.length > 0 && stopsGone.length === 0) continue;
      reprotect.add(position.ticket);
      const lookedUp = held.orders.filter((o) => unfilled.has(o.id)).map((o) => o.id);
      const partly = held.orders.filter((o) => inPart.has(o.id)).map((o) => o.id);
      const foundEnded =
        (lookedUp.length === 0
          ? ''
          : `; looked up by id, ${lookedUp.length === 1 ? 'order' : 'orders'} ${lookedUp.join(', ')} ended with nothing filled (cancelled, expired, or unknown to the venue)`) +
        partly
          .map(
            (id) =>
              `; looked up by id, order ${id} ended (cancelled or expired) after filling ${inPart.get(id)} lots, taken as an exit`,
          )
          .join('');
      findings.push({
        level: 'error',
        message:
          standing.length === 0
            ? `none of the stop and target orders of position ${position.ticket} is open at the venue any more, though the venue still holds the position: they are placed again${foundEnded}`
            : `the stop order ${stopsGone.map((o) => o.id).join(', ')} of position ${position.ticket} is not open at the venue any more, though the venue still holds the position and its ${standing.length === 1 ? 'target' : 'targets'} ${standing.map((o) => o.id).join(', ')} still ${standing.length === 1 ? 'stands' : 'stand'}: the position has no stop at the venue; its stop and targets are placed again${foundEnded}`,
        fields: {
          position: position.ticket,
          symbol: position.symbol,
          orders: held.orders.map((o) => o.id),
          ...(standing.length > 0 && { stopGone: stopsGone.map((o) => o.id), standing: standing.map((o) => o.id) }),
          ...(lookedUp.length > 0 && { endedUnfilled: lookedUp }),
          ...(partly.length > 0 && { endedInPart: partly }),
        },
      });
    }
  }

  return {
    book: { ...book, state: { ...nextState, positions, orders }, protection, orders: pendingRefs, positions: links },
    notManaged,
    cancel,
    dropped,
    droppedOrders,
    reprotect: [...reprotect].sort((a, b) => a - b),
    partlyFilled,
    findings,
  };
}

/** The revision of a position's stop or target named by its client id (`…p<ticket>r<revision><s|t…>`); null for any other order. */
function protectionRevision(clientId: string | null): number | null {
  if (!isOwnClientOrderId(clientId)) return null;
  const step = /^p\d+r(\d+)[a-z]/.exec(clientId!.slice(18));
  return step ? Number(step[1]) : null;
}

/** A venue naming positions by symbol and side (no position ids): nothing worth linking. */
function venueNamesBySide(position: VenuePosition): boolean {
  return position.id === `${position.symbol}:${position.side}`;
}

function orderRef(order: VenueOrder): VenueOrderRef {
  return order.trigger ? { id: order.id, symbol: order.symbol, trigger: true } : { id: order.id, symbol: order.symbol };
}

function round(lots: number): number {
  return Math.round(lots * 1e8) / 1e8;
}
