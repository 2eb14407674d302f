/**
 * What became of a signal, in the terms an agent acknowledges it with:
 * `executed` with a sentence saying what was done, or `rejected` with the reason.
 */
import type { EngineEvent } from './events.js';

export type SignalOutcome = { status: 'executed'; message: string } | { status: 'rejected'; message: string };

function describeEvent(event: EngineEvent): string | null {
  switch (event.type) {
    case 'opened':
      // A partial fill says so: "opened buy 0.12 of 0.2 EURUSD at …".
      return `opened ${event.side} ${event.volume}${event.requested !== undefined ? ` of ${event.requested}` : ''} ${event.symbol} at ${event.price} (position ${event.position})`;
    case 'order_placed':
      return `placed ${event.side} ${event.kind} ${event.volume} ${event.symbol} at ${event.price} (order ${event.order})`;
    case 'closed':
      return `closed position ${event.position}: ${event.volume} lots at ${event.price}, profit ${event.profit}`;
    case 'partial_close':
      // A close the venue filled in part says so: "closed 0.03 of 0.1 lots of position 4 …".
      return `closed ${event.volume}${event.requested !== undefined ? ` of ${event.requested}` : ''} lots of position ${event.position} at ${event.price}, profit ${event.profit}`;
    case 'order_cancelled':
      return `cancelled order ${event.order}`;
    case 'sl_moved':
      return `moved the stop of position ${event.position} to ${event.sl}`;
    case 'order_filled':
      return `filled order ${event.order} at ${event.price} (position ${event.position})`;
    case 'rejected':
      return null;
  }
}

/** The sentence an executed signal is acknowledged with. */
export function describeEvents(events: readonly EngineEvent[]): string {
  return events
    .map(describeEvent)
    .filter((s): s is string => s !== null)
    .join('; ');
}
