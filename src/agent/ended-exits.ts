import type { EndedExit, VenueOrder } from './venue.js';
import type { VenueBook } from './venue-book.js';

/**
 * The book's stops and targets that are not among the venue's open orders (`open`): ended, filled
 * or cancelled, while the agent did not look. Each is looked up by its id before anything is
 * placed in its stead (see `Venue.followEnded`): a stop filled unseen, on a spot account holding
 * more of the coin than the book, looks like one cancelled to every other read. Pure.
 */
export function endedExits(book: VenueBook, open: readonly VenueOrder[]): EndedExit[] {
  const listed = new Set(open.map((o) => o.id));
  const ended: EndedExit[] = [];
  for (const position of book.state.positions) {
    const held = book.protection[String(position.ticket)];
    for (const order of held?.orders ?? []) {
      if (listed.has(order.id)) continue;
      ended.push({
        ...order,
        // The agent's stops are conditional orders, its targets plain limit ones.
        kind: order.trigger === true ? 'stop_loss' : 'take_profit',
        side: position.side === 'buy' ? 'sell' : 'buy',
        filled: book.exits?.[order.id]?.lots ?? 0,
      });
    }
  }
  return ended;
}
