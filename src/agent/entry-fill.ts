import { applyFill, type EngineEvent, type EngineState } from '../engine/index.js';
import { clientOrderId } from './client-order-id.js';
import { roundLots } from './order-tracker.js';
import type { VenueOrder } from './venue.js';

export interface EntryFillStep {
  state: EngineState;
  /** The position holding the entry's lots; null when the book has neither it nor its order. */
  position: number | null;
  /** Lots this step added to the book (0: the report told nothing new). */
  lots: number;
  events: EngineEvent[];
}

/**
 * A pending entry's fill as the venue tells it (cumulative: the order's lots filled so far and
 * their average) applied to the book. The first lots open a position of exactly those lots; later
 * ones join it (found by the entry's client id, so a report given again adds nothing: what the
 * position opened with is its `originalVolume`). `working`: the rest of the entry still stands at
 * the venue and stays pending in the book with the lots not filled; otherwise the entry leaves
 * the book, whatever did not fill with it. Pure.
 */
export function takeEntryFill(
  state: EngineState,
  order: VenueOrder,
  /** The book's pending order for it; undefined once the book dropped it (a cancel signal). */
  ticket: number | undefined,
  working: boolean,
  now: number,
): EntryFillStep {
  const fed = state.positions.find(
    (p) => p.signalId !== null && order.clientId !== null && clientOrderId(p.signalId, 'o') === order.clientId,
  );
  // A fee taken from the coins bought: the position holds what the account keeps of them.
  const filled = order.feeInCoin?.kept ?? order.filled;
  if (fed) {
    const lots = Math.max(0, roundLots(filled - fed.originalVolume));
    const pending = ticket !== undefined && state.orders.some((o) => o.ticket === ticket);
    if (lots === 0 && (working || !pending)) return { state, position: fed.ticket, lots: 0, events: [] };
    // The price of the new lots: the one that makes the venue's average over all of them.
    const average = order.average ?? order.price ?? fed.price;
    const price =
      lots > 0 ? Number(((average * filled - fed.price * fed.originalVolume) / lots).toPrecision(12)) : average;
    const step = applyFill(
      state,
      { type: 'order_filled', order: ticket ?? -1, into: fed.ticket, volume: lots, price, working },
      now,
    );
    return { state: step.state, position: fed.ticket, lots, events: step.events };
  }
  if (ticket === undefined || !state.orders.some((o) => o.ticket === ticket))
    return { state, position: null, lots: 0, events: [] };
  const step = applyFill(
    state,
    {
      type: 'order_filled',
      order: ticket,
      price: order.average ?? order.price ?? 0,
      volume: filled > 0 ? filled : null,
      working,
    },
    now,
  );
  const opened = step.events.find((e) => e.type === 'opened');
  return {
    state: step.state,
    position: opened?.type === 'opened' ? opened.position : null,
    lots: opened?.type === 'opened' ? opened.volume : 0,
    events: step.events,
  };
}
