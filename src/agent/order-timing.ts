import type { AckTimings } from '../protocol/delivery.js';
import type { Venue, VenueOrder } from './venue.js';

/**
 * Times one signal's way through the venue for its acknowledgement (AckTimings): made when the
 * engine is handed the signal (it decides synchronously, before any order leaves), it watches
 * the venue's `place` and `close`, the calls that send a signal's own order, and keeps the times
 * of the first: when it left, when the venue answered, and, when that answer says it filled,
 * that time too. The venue is watched through a view of it for this signal alone, so signals
 * carried out side by side keep their times apart.
 */
export class OrderTiming {
  readonly venue: Venue;
  private readonly timings: AckTimings;

  constructor(venue: Venue, now: () => number = Date.now) {
    this.timings = { decidedAt: new Date(now()).toISOString(), sentAt: null, venueAckedAt: null, filledAt: null };
    const timed =
      <A extends unknown[]>(send: (...args: A) => Promise<VenueOrder>) =>
      async (...args: A): Promise<VenueOrder> => {
        const first = this.timings.sentAt === null;
        if (first) this.timings.sentAt = new Date(now()).toISOString();
        const order = await send(...args);
        if (first) {
          const answered = new Date(now()).toISOString();
          this.timings.venueAckedAt = answered;
          if (order.status === 'filled' || order.filled > 0) this.timings.filledAt = answered;
        }
        return order;
      };
    const place = timed(venue.place.bind(venue));
    const close = timed(venue.close.bind(venue));
    // Everything else is the venue's own, called on the venue itself (its methods use its fields).
    this.venue = new Proxy(venue, {
      get(target, property) {
        if (property === 'place') return place;
        if (property === 'close') return close;
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
      },
    });
  }

  /** The times so far (a copy). */
  result(): AckTimings {
    return { ...this.timings };
  }
}
