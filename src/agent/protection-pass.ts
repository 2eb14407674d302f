import type { Logger } from 'pino';
import { applyFill, type Position } from '../engine/index.js';
import { clientOrderId } from './client-order-id.js';
import { lackingProtection, type ProtectionWatch, type Unprotected } from './protection-state.js';
import { VenueRefusedError, type Venue } from './venue.js';
import { protectionOf, venuePosition, type VenueBook } from './venue-book.js';

/** What the protection pass needs of its agent: the book to read and replace, the journal to write. */
export interface ProtectionPassHost {
  readonly venue: Venue;
  readonly watch: ProtectionWatch;
  readonly log: Logger;
  /** Positions whose stop and targets must be placed again though the book holds orders for them (reduced, adopted, gone from the venue). */
  readonly due: Set<number>;
  book(): VenueBook;
  setBook(book: VenueBook): void;
  /** Writes the journal. */
  save(): Promise<void>;
  publish(): void;
}

/**
 * Places the stop and targets of each position that lacks them (refused before, adopted,
 * reduced, gone from the venue); a refusal is counted, and the operator's rule applied after
 * `--unprotected-after` of them: keep (told at error at most once a minute) or close at market.
 * VenueUnreachableError propagates: the pass is tried again later.
 */
export async function protectPositions(host: ProtectionPassHost, now: number): Promise<void> {
  const { venue, log, watch } = host;
  const due = new Set([...host.due, ...lackingProtection(host.book()).map((p) => p.ticket)]);
  for (const ticket of due) {
    const book = host.book();
    const position = book.state.positions.find((p) => p.ticket === ticket);
    const key = String(ticket);
    const held = book.protection[key];
    if (!position || held?.moving !== undefined) {
      host.due.delete(ticket);
      continue;
    }
    const revision = held === undefined ? 0 : held.revision + 1;
    const protection = { ...protectionOf(book, position, revision), replaces: held?.orders ?? [], mayExist: true };
    if (protection.stop === null && protection.targets.length === 0) {
      host.due.delete(ticket);
      continue;
    }
    try {
      const placed = await venue.protect(venuePosition(book, position), protection);
      const latest = host.book();
      host.setBook({
        ...latest,
        protection: {
          ...latest.protection,
          [key]: {
            revision,
            orders: placed.map((o) => ({ id: o.id, symbol: o.symbol, ...(o.trigger && { trigger: true }) })),
          },
        },
      });
      host.due.delete(ticket);
      watch.clear(ticket);
      log.info(
        {
          position: ticket,
          symbol: position.symbol,
          orders: placed.map((o) => ({ id: o.id, kind: o.kind, price: o.price, volume: o.volume })),
        },
        'stop and targets placed',
      );
      await host.save();
    } catch (error) {
      if (!(error instanceof VenueRefusedError)) throw error;
      if (error.protectionCancelled) {
        // The orders replaced were cancelled before the refusal: the book names none any more.
        const latest = host.book();
        host.setBook({ ...latest, protection: { ...latest.protection, [key]: { revision, orders: [] } } });
      }
      const reason = `${venue.name} refused the stop or targets of position ${ticket}: ${error.message}`;
      const verdict = watch.refused(ticket, reason, now);
      if (verdict.do === 'nothing')
        log.warn(
          { position: ticket, symbol: position.symbol },
          `${reason}; the position is NOT protected, and the stop is tried again at the next pass`,
        );
      else if (verdict.do === 'tell')
        log.error(
          { position: ticket, symbol: position.symbol, unprotected: verdict.entry },
          `position ${ticket} is NOT protected: ${reason}; kept as --unprotected keep says, and tried again at every pass. Protect or close it at the venue`,
        );
      else await closeUnprotected(host, position, verdict.entry);
    }
    host.publish();
  }
}

/** `--unprotected close`: the position the venue keeps refusing a stop for is closed at the market. */
async function closeUnprotected(host: ProtectionPassHost, position: Position, entry: Unprotected): Promise<void> {
  const { venue, log } = host;
  const key = String(position.ticket);
  log.error(
    {
      position: position.ticket,
      symbol: position.symbol,
      side: position.side,
      volume: position.volume,
      unprotected: entry,
    },
    `position ${position.ticket} is NOT protected after ${entry.attempts} refusals: closing it at the market, as --unprotected close says`,
  );
  let order;
  try {
    order = await venue.close(
      venuePosition(host.book(), position),
      position.volume,
      clientOrderId(position.signalId ?? `position-${position.ticket}`, `u${position.ticket}`),
      true,
    );
  } catch (error) {
    if (!(error instanceof VenueRefusedError)) throw error;
    log.error(
      { position: position.ticket, err: error.message },
      `${venue.name} refused to close the unprotected position ${position.ticket}; it stays open and unprotected: close it at the venue`,
    );
    return;
  }
  if (order.filled <= 0) {
    log.error(
      { position: position.ticket, order: order.id, status: order.status, reason: order.reason },
      `closing the unprotected position ${position.ticket} filled nothing; it stays open and unprotected: close it at the venue`,
    );
    return;
  }
  const volume = Math.min(order.filled, position.volume);
  const book = host.book();
  const step = applyFill(
    book.state,
    {
      type: 'position_closed',
      position: position.ticket,
      volume,
      price: order.average ?? position.price,
      reason: 'sl',
    },
    Date.now(),
  );
  for (const event of step.events) log.info({ event }, 'account event');
  if (step.state.positions.some((p) => p.ticket === position.ticket)) {
    host.setBook({ ...book, state: step.state });
    host.due.add(position.ticket);
  } else {
    for (const held of book.protection[key]?.orders ?? []) await venue.cancel(held).catch(() => undefined);
    const protection = { ...book.protection };
    delete protection[key];
    const links = { ...book.positions };
    delete links[key];
    host.setBook({ ...book, state: step.state, protection, positions: links });
    host.due.delete(position.ticket);
    host.watch.clear(position.ticket);
  }
  await host.save();
}
