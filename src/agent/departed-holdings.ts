import type { VenueBook } from './venue-book.js';
import type { DepartedOrder, DepartedPosition } from './venue-journal.js';

/** What the start's reconciliation dropped while a signal was in flight, kept for that signal. */
export interface Departed {
  positions: DepartedPosition[];
  orders: DepartedOrder[];
}

/** The departed kept for a signal no more once it has its outcome (and dropped once no signal is left). */
export function settledFor<T extends { signals: string[] }>(departed: T[], signal: string): T[] {
  return departed.flatMap((d) =>
    d.signals.includes(signal)
      ? d.signals.length > 1
        ? [{ ...d, signals: d.signals.filter((s) => s !== signal) }]
        : []
      : [d],
  );
}

/** The book with the departed positions and pending orders back, as they stood with their venue links. */
export function withDeparted(book: VenueBook, departed: Departed): VenueBook {
  const tickets = new Set(book.state.positions.map((p) => p.ticket));
  const back = departed.positions.filter((d) => !tickets.has(d.position.ticket));
  const positions = { ...book.positions };
  const protection = { ...book.protection };
  for (const d of back) {
    if (d.venueId !== undefined) positions[String(d.position.ticket)] = d.venueId;
    if (d.protection) protection[String(d.position.ticket)] = d.protection;
  }
  const all = [...book.state.positions, ...back.map((d) => d.position)].sort((a, b) => a.ticket - b.ticket);
  const pending = new Set(book.state.orders.map((o) => o.ticket));
  const orderBack = departed.orders.filter((d) => !pending.has(d.order.ticket));
  const refs = { ...book.orders };
  for (const d of orderBack) refs[String(d.order.ticket)] = d.ref;
  const orders = [...book.state.orders, ...orderBack.map((d) => d.order)].sort((a, b) => a.ticket - b.ticket);
  return { ...book, state: { ...book.state, positions: all, orders }, protection, positions, orders: refs };
}

/** Whatever the signal came to, the venue holds the departed positions and orders no more: out of the book. */
export function withoutDeparted(book: VenueBook, departed: Departed): VenueBook {
  if (departed.positions.length === 0 && departed.orders.length === 0) return book;
  const gone = new Set(departed.positions.map((d) => d.position.ticket));
  const positions = { ...book.positions };
  const protection = { ...book.protection };
  for (const ticket of gone) {
    delete positions[String(ticket)];
    delete protection[String(ticket)];
  }
  const goneOrders = new Set(departed.orders.map((d) => d.order.ticket));
  const refs = { ...book.orders };
  for (const ticket of goneOrders) delete refs[String(ticket)];
  return {
    ...book,
    state: {
      ...book.state,
      positions: book.state.positions.filter((p) => !gone.has(p.ticket)),
      orders: book.state.orders.filter((o) => !goneOrders.has(o.ticket)),
    },
    protection,
    positions,
    orders: refs,
  };
}
