import type { VenueOrder } from './venue.js';

/**
 * The one place where a venue's word about an order (a FIX ExecutionReport, a CCXT order read
 * back) becomes lots filled: pure, no I/O, no clock. Each venue translates its own report into
 * an OrderUpdate; the tracker keeps what is known of each order and answers what the update
 * added (lots and their price), whether the order ended, and what a bust took back. Updates are
 * cumulative, so a report given twice, or two reports in either order, leave the same order.
 */

/** What the agent placed the order for. */
export type OrderRole = 'entry' | 'stop' | 'target' | 'close';

/** A venue's order status, in the venue-neutral words of FIX's OrdStatus and CCXT's order status. */
export type OrderUpdateStatus =
  | 'new'
  | 'partially_filled'
  | 'filled'
  | 'cancelled'
  | 'rejected'
  | 'expired'
  /** The venue took back fills it had reported (FIX ExecType H, trade cancel). */
  | 'busted';

export interface OrderUpdate {
  status: OrderUpdateStatus;
  /** Lots filled so far (CumQty, CCXT's `filled`); null when the report does not say. */
  filled: number | null;
  /** The average price of those lots (AvgPx, CCXT's `average`); null when not given. */
  average: number | null;
  /** This report's own fill (LastQty at LastPx), where the venue reports fills one by one. */
  last: { price: number; volume: number } | null;
  fee?: { cost: number; currency: string } | null;
  /** The venue's words for a cancel or refusal. */
  reason?: string;
}

/** What the tracker needs of an order: its lots, what filled of them and whether it still works. */
export interface OrderFill {
  volume: number;
  filled: number;
  average: number | null;
  status: VenueOrder['status'];
  reason?: string;
}

export interface OrderStep<T extends OrderFill> {
  order: T;
  /** Lots this update added (0: nothing new, a report already applied or an older one). */
  lots: number;
  /** The price of those lots; null when none were added. */
  price: number | null;
  /** The order stopped working with this update (filled, cancelled, expired, rejected). */
  ended: boolean;
  /** Lots a bust took back. */
  busted: number;
}

const EPSILON = 1e-9;

/**
 * A status never goes back: a late "new" after "filled" changes nothing. Ended beats open, and
 * among ended ones filled beats cancelled beats rejected, so the last word does not depend on
 * the order the reports came in.
 */
const RANK: Record<VenueOrder['status'], number> = { open: 0, rejected: 1, cancelled: 2, filled: 3 };

/** The order's status as the book and the acknowledgements word it. */
export function orderStatusOf(status: OrderUpdateStatus): VenueOrder['status'] {
  switch (status) {
    case 'filled':
      return 'filled';
    case 'cancelled':
    case 'expired':
      return 'cancelled';
    case 'rejected':
      return 'rejected';
    default:
      return 'open';
  }
}

/** Lots to 8 decimals: a venue's quantities are decimal strings, and sums of them must compare equal. */
export function roundLots(value: number): number {
  return Number(value.toFixed(8));
}

/** Applies one update to an order: pure; the order given is left as it was. */
export function applyUpdate<T extends OrderFill>(order: T, update: OrderUpdate): OrderStep<T> {
  if (update.status === 'busted') {
    const after = Math.max(0, update.filled ?? (update.last ? order.filled - update.last.volume : order.filled));
    const busted = roundLots(Math.max(0, order.filled - after));
    if (busted === 0) return { order, lots: 0, price: null, ended: false, busted: 0 };
    const filled = roundLots(after);
    return {
      order: { ...order, filled, average: filled > 0 ? (update.average ?? order.average) : null },
      lots: 0,
      price: null,
      ended: false,
      busted,
    };
  }
  const told = update.filled ?? (update.last ? order.filled + update.last.volume : order.filled);
  const filled = roundLots(Math.max(order.filled, told));
  const lots = roundLots(filled - order.filled);
  let price: number | null = null;
  if (lots > 0) {
    if (update.last && Math.abs(update.last.volume - lots) < EPSILON) price = update.last.price;
    else if (update.average !== null && order.filled > 0 && order.average !== null)
      // The price that makes the new average; to 12 digits, as the venue's own prices are decimals.
      price = Number(((update.average * filled - order.average * order.filled) / lots).toPrecision(12));
    else price = update.average ?? update.last?.price ?? null;
  }
  const average =
    lots > 0
      ? (update.average ?? (price !== null ? ((order.average ?? 0) * order.filled + price * lots) / filled : null))
      : order.average === null && filled > 0
        ? update.average
        : order.average;
  const said = orderStatusOf(update.status);
  const status = RANK[said] > RANK[order.status] ? said : order.status;
  const ended = order.status === 'open' && status !== 'open';
  const reason = ended && update.reason !== undefined ? { reason: update.reason } : {};
  const changed = lots > 0 || status !== order.status || average !== order.average;
  return {
    order: changed ? { ...order, filled, average, status, ...reason } : order,
    lots,
    price,
    ended,
    busted: 0,
  };
}

/** An order the agent follows at the venue: its ids, what it is for, and its fills so far. */
export interface TrackedOrder extends OrderFill {
  clientId: string | null;
  venueId: string;
  role: OrderRole;
  symbol: string;
}

/** The orders the agent follows, by the venue's order id. */
export type OrderTracker = Readonly<Record<string, TrackedOrder>>;

/** What an update means for the book. */
export type TrackerEffect =
  /** An entry filled `lots` more at `price`; `working`: the rest of it still stands at the venue. */
  | { type: 'entry_fill'; order: TrackedOrder; lots: number; price: number; working: boolean }
  /** A stop or target (or a close) filled `lots` more: its position shrinks by them. */
  | { type: 'exit_fill'; order: TrackedOrder; lots: number; price: number }
  /** The order ended (filled, cancelled, expired, rejected); with what filled of it in `order`. */
  | { type: 'ended'; order: TrackedOrder }
  /** The venue took back `lots` of the order's fills. */
  | { type: 'bust'; order: TrackedOrder; lots: number };

/** Adds an order to follow; one followed already keeps what is known of it. */
export function track(tracker: OrderTracker, order: TrackedOrder): OrderTracker {
  if (tracker[order.venueId] !== undefined) return tracker;
  return { ...tracker, [order.venueId]: order };
}

/** Stops following an order. */
export function untrack(tracker: OrderTracker, venueId: string): OrderTracker {
  if (tracker[venueId] === undefined) return tracker;
  const { [venueId]: _gone, ...rest } = tracker;
  return rest;
}

/**
 * Applies a venue's update of one order: the tracker as it is after it, and the effects for the
 * book (an order not followed changes nothing). A fill and the order's end in one update give
 * both effects, the fill first.
 */
export function applyToTracker(
  tracker: OrderTracker,
  venueId: string,
  update: OrderUpdate,
): { tracker: OrderTracker; effects: TrackerEffect[] } {
  const known = tracker[venueId];
  if (known === undefined) return { tracker, effects: [] };
  const step = applyUpdate(known, update);
  const order = step.order;
  const effects: TrackerEffect[] = [];
  if (step.lots > 0 && step.price !== null) {
    if (order.role === 'entry')
      effects.push({ type: 'entry_fill', order, lots: step.lots, price: step.price, working: order.status === 'open' });
    else effects.push({ type: 'exit_fill', order, lots: step.lots, price: step.price });
  }
  if (step.busted > 0) effects.push({ type: 'bust', order, lots: step.busted });
  if (step.ended) effects.push({ type: 'ended', order });
  return { tracker: order === known ? tracker : { ...tracker, [venueId]: order }, effects };
}
