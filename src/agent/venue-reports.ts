import { applyFill, type EngineEvent, type Position } from '../engine/index.js';
import { clientOrderId } from './client-order-id.js';
import { takeEntryFill } from './entry-fill.js';
import { roundLots } from './order-tracker.js';
import { VenueRefusedError, type Venue, type VenueOrderRef, type VenueReport } from './venue.js';
import { protectionOf, venuePosition, type VenueBook } from './venue-book.js';

/**
 * Applies what the venue did on its own (its reports: a pending entry filled, a stop or a
 * target filled) to the book at the venue's prices and lots, then has the venue carry out what
 * follows: a filled entry gets its stop and targets (an entry filled in part, for the lots
 * filled; again, resized, as more fill); a position a target reduced gets them
 * again for what is left (a stop for the whole of the old volume would open the other side on
 * a venue whose orders are not tied to the position); a closed position's leftover orders are
 * cancelled; lots of an entry the venue took back (a bust) leave the position they opened, which
 * is protected again for what stands (or leaves the book, its orders cancelled, when nothing
 * does). The book changes first, so a refused follow-up only leaves a warning.
 */
export async function applyReports(
  venue: Venue,
  book: VenueBook,
  reports: VenueReport[],
  now: number,
): Promise<{ book: VenueBook; events: EngineEvent[]; warnings: string[] }> {
  let next: VenueBook = {
    state: book.state,
    protection: { ...book.protection },
    orders: { ...book.orders },
    positions: { ...book.positions },
  };
  const events: EngineEvent[] = [];
  const warnings: string[] = [];
  const quietly = async (what: string, action: () => Promise<void>) => {
    try {
      await action();
    } catch (error) {
      if (!(error instanceof VenueRefusedError)) throw error;
      warnings.push(`${venue.name} refused to ${what}: ${error.message}`);
    }
  };
  const protect = async (position: Position, replaces: VenueOrderRef[]) => {
    const key = String(position.ticket);
    const revision = (next.protection[key]?.revision ?? -1) + 1;
    const protection = { ...protectionOf(next, position, revision), replaces };
    if (protection.stop === null && protection.targets.length === 0) return;
    await quietly(`protect position ${position.ticket}; it is NOT protected`, async () => {
      const placed = await venue.protect(venuePosition(next, position), protection);
      next.protection[key] = {
        revision,
        orders: placed.map((o) => ({ id: o.id, symbol: o.symbol, ...(o.trigger && { trigger: true }) })),
      };
    });
  };

  const cancelAll = async (key: string, orders: VenueOrderRef[]) => {
    for (const order of orders)
      await quietly(
        `cancel order ${order.id} of the closed position ${key}`,
        async () => void (await venue.cancel(order)),
      );
    delete next.protection[key];
    delete next.positions![key];
  };

  for (const report of reports) {
    if (report.type === 'fill_busted') {
      const entry = report.order.clientId;
      const position = next.state.positions.find(
        (p) => p.signalId !== null && entry !== null && clientOrderId(p.signalId, 'o') === entry,
      );
      if (!position) {
        warnings.push(
          `${venue.name} took back ${report.lots} lots of order ${report.order.id} (${entry ?? 'no client id'}), whose position the book does not hold`,
        );
        continue;
      }
      const key = String(position.ticket);
      const lots = Math.min(report.lots, position.volume);
      const rest = roundLots(position.volume - lots);
      warnings.push(
        `${venue.name} took back ${lots} lots of order ${entry} (a bust): position ${position.ticket} ${rest > 0 ? `holds ${rest} lots and is protected for them` : 'is gone, and its orders are cancelled'}`,
      );
      if (rest > 0) {
        const shrunk = {
          ...position,
          volume: rest,
          originalVolume: roundLots(Math.max(rest, position.originalVolume - lots)),
        };
        next = {
          ...next,
          state: {
            ...next.state,
            positions: next.state.positions.map((p) => (p.ticket === position.ticket ? shrunk : p)),
          },
        };
        await protect(shrunk, next.protection[key]?.orders ?? []);
        continue;
      }
      next = {
        ...next,
        state: { ...next.state, positions: next.state.positions.filter((p) => p.ticket !== position.ticket) },
      };
      await cancelAll(key, next.protection[key]?.orders ?? []);
      continue;
    }
    if (report.type === 'entry_filled') {
      const found = Object.entries(next.orders).find(([, ref]) => ref.id === report.order.id)?.[0];
      const ticket = found === undefined ? undefined : Number(found);
      const working = report.working === true;
      const step = takeEntryFill(next.state, report.order, ticket, working, now);
      if (step.position === null) {
        warnings.push(
          `${venue.name} filled order ${report.order.id} (${report.order.clientId ?? 'no client id'}), which the book does not hold; the position it opened is not managed`,
        );
        continue;
      }
      if (!working && found !== undefined) delete next.orders[found];
      next = { ...next, state: step.state };
      events.push(...step.events);
      const position = next.state.positions.find((p) => p.ticket === step.position);
      // Given again (after a restart), or told nothing new: the position has those lots already.
      if (!position || step.lots === 0) continue;
      if (report.order.positionId !== undefined) next.positions![String(position.ticket)] = report.order.positionId;
      // More lots: the stop and targets are placed again for all of them, then the old ones cancelled.
      await protect(position, next.protection[String(position.ticket)]?.orders ?? []);
      continue;
    }
    const filledId = report.order?.id;
    const byOrder =
      filledId === undefined
        ? undefined
        : Object.entries(next.protection).find(([, held]) => held.orders.some((o) => o.id === filledId))?.[0];
    const byId =
      report.order?.positionId === undefined
        ? undefined
        : Object.entries(next.positions ?? {}).find(([, id]) => id === report.order!.positionId)?.[0];
    const position =
      next.state.positions.find((p) => String(p.ticket) === (byOrder ?? byId)) ??
      next.state.positions.find((p) => p.symbol === report.symbol && p.side === report.side);
    if (!position) {
      warnings.push(
        `${venue.name} closed ${report.volume} lots of a ${report.side} ${report.symbol} position the book does not hold`,
      );
      continue;
    }
    const key = String(position.ticket);
    const price = report.price ?? position.price;
    const step = applyFill(
      next.state,
      {
        type: 'position_closed',
        position: position.ticket,
        volume: report.volume,
        price,
        reason: report.by === 'take_profit' ? 'tp' : 'sl',
      },
      now,
    );
    next = { ...next, state: step.state };
    events.push(...step.events);
    const leftover = (next.protection[key]?.orders ?? []).filter((o) => o.id !== filledId);
    const rest = next.state.positions.find((p) => p.ticket === position.ticket);
    if (rest) {
      await protect(rest, leftover);
      continue;
    }
    await cancelAll(key, leftover);
  }
  return { book: next, events, warnings };
}
