/**
 * Fills a venue made on its own, applied to the book as they happened there: a pending order
 * filled at the venue's price, a position closed (in part) by the venue's stop or target order.
 * The venue's price and lots replace what the engine would have assumed at its own quotes.
 */
import { closeLots } from './closing.js';
import type { StepResult } from './apply-tick.js';
import { closeLedger, instrumentOf, openLedger, takeTicket } from './ledger.js';
import { newPosition, openedEvent } from './opening.js';
import type { EngineState } from './state.js';

export type BookFill =
  /**
   * Pending order `order` filled: `volume` lots (all of it when null) at `price`. `working`: the
   * venue still works the rest, which stays pending with the lots not filled. `into`: the
   * position an earlier fill of this order opened, which these lots join (its volume grows, its
   * price becomes the average); the order may be gone from the book already (cancelled by a signal).
   */
  | { type: 'order_filled'; order: number; price: number; volume: number | null; working?: boolean; into?: number }
  /** `volume` lots of position `position` closed at `price` by its stop (`sl`) or a target (`tp`). */
  | { type: 'position_closed'; position: number; volume: number; price: number; reason: 'sl' | 'tp' };

/** Answers the state with the fill applied; an order or position the book no longer has changes nothing. */
export function applyFill(state: EngineState, fill: BookFill, time: number): StepResult {
  const ledger = openLedger(state, time);
  if (fill.type === 'order_filled') {
    const order = ledger.orders.find((o) => o.ticket === fill.order);
    const into = fill.into === undefined ? undefined : ledger.positions.find((p) => p.ticket === fill.into);
    if (into) {
      const lots = fill.volume ?? 0;
      const rest = order ? order.volume - lots : 0;
      ledger.orders = ledger.orders.flatMap((o) =>
        o !== order ? [o] : fill.working === true && rest > 1e-9 ? [{ ...o, volume: Number(rest.toFixed(8)) }] : [],
      );
      if (lots > 0) {
        const volume = Number((into.volume + lots).toFixed(8));
        const originalVolume = Number((into.originalVolume + lots).toFixed(8));
        const price = (into.price * into.originalVolume + fill.price * lots) / originalVolume;
        ledger.positions = ledger.positions.map((p) => (p !== into ? p : { ...p, volume, originalVolume, price }));
      }
      return { state: closeLedger(ledger), events: ledger.events };
    }
    if (!order) return { state, events: [] };
    const position = newPosition(
      takeTicket(ledger),
      { symbol: order.symbol, side: order.side, volume: fill.volume ?? order.volume, price: fill.price, time },
      order,
    );
    const rest = order.volume - position.volume;
    ledger.orders = ledger.orders.flatMap((o) =>
      o !== order ? [o] : fill.working === true && rest > 1e-9 ? [{ ...o, volume: Number(rest.toFixed(8)) }] : [],
    );
    ledger.positions.push(position);
    ledger.events.push({
      type: 'order_filled',
      time,
      order: order.ticket,
      position: position.ticket,
      price: fill.price,
    });
    const opened = openedEvent(time, position);
    ledger.events.push(
      fill.volume !== null && fill.volume < order.volume ? { ...opened, requested: order.volume } : opened,
    );
    return { state: closeLedger(ledger), events: ledger.events };
  }
  const position = ledger.positions.find((p) => p.ticket === fill.position);
  const spec = position ? instrumentOf(ledger.config, position.symbol) : null;
  if (!position || spec === null) return { state, events: [] };
  // A target filled: the next protection carries the levels not reached yet.
  const moved =
    fill.reason === 'tp' ? { ...position, tpNext: Math.min(position.tp.length, position.tpNext + 1) } : position;
  const rest = closeLots(ledger, moved, fill.volume, fill.price, fill.reason, spec);
  ledger.positions = ledger.positions.flatMap((p) => (p !== position ? [p] : rest === null ? [] : [rest]));
  return { state: closeLedger(ledger), events: ledger.events };
}
