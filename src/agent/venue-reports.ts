import { applyFill, type EngineEvent, type Position } from '../engine/index.js';
import { clientOrderId } from './client-order-id.js';
import { takeEntryFill } from './entry-fill.js';
import { roundLots } from './order-tracker.js';
import { VenueRefusedError, type Venue, type VenueOrderRef, type VenueReport } from './venue.js';
import { KEPT_EXITS, protectionOf, venuePosition, type ExitFill, type VenueBook } from './venue-book.js';
import type { RefusedProtection } from './venue-execution.js';

/**
 * Applies what the venue did on its own (its reports: a pending entry filled, a stop or a
 * target filled) to the book at the venue's prices and lots, then has the venue carry out what
 * follows: a filled entry gets its stop and targets (an entry filled in part, for the lots
 * filled; again, resized, as more fill); a position a target reduced gets them
 * again for what is left (a stop for the whole of the old volume would open the other side on
 * a venue whose orders are not tied to the position); a closed position's leftover orders are
 * cancelled; lots of an entry the venue took back (a bust) leave the position they opened, which
 * is protected again for what stands (or leaves the book, its orders cancelled, when nothing
 * does); lots of a stop's, target's or close's fill the venue took back are held again: the position
 * comes back (grows back) by them, the close's profit leaves the balance, and it is protected
 * again for all its lots. The book changes first, so a refused follow-up only leaves a warning.
 */
export async function applyReports(
  venue: Venue,
  book: VenueBook,
  reports: VenueReport[],
  now: number,
): Promise<{
  book: VenueBook;
  events: EngineEvent[];
  warnings: string[];
  /** Said at error: a stop that ended having filled only part of its position (the rest stood without one). */
  errors: { message: string; fields: Record<string, unknown> }[];
  unprotected: RefusedProtection[];
}> {
  let next: VenueBook = {
    state: book.state,
    protection: { ...book.protection },
    orders: { ...book.orders },
    positions: { ...book.positions },
    ...(book.exits !== undefined && { exits: { ...book.exits } }),
  };
  const events: EngineEvent[] = [];
  const warnings: string[] = [];
  const errors: { message: string; fields: Record<string, unknown> }[] = [];
  const unprotected: RefusedProtection[] = [];
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
    try {
      const placed = await venue.protect(venuePosition(next, position), protection);
      next.protection[key] = {
        revision,
        orders: placed.map((o) => ({ id: o.id, symbol: o.symbol, ...(o.trigger && { trigger: true }) })),
      };
    } catch (error) {
      if (!(error instanceof VenueRefusedError)) throw error;
      // The orders replaced were cancelled before the refusal: none stands, the protection pass places them again.
      if (error.protectionCancelled) next.protection[key] = { revision, orders: [] };
      warnings.push(
        `${venue.name} refused to protect position ${position.ticket}; it is NOT protected: ${error.message}`,
      );
      unprotected.push({
        position: position.ticket,
        symbol: position.symbol,
        reason: `${venue.name} refused its stop or targets: ${error.message}`,
      });
    }
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
    const exitKind =
      report.type === 'fill_busted' && (report.order.kind === 'stop_loss' || report.order.kind === 'take_profit');
    if (report.type === 'fill_busted' && (exitKind || next.exits?.[report.order.id] !== undefined)) {
      const exits = next.exits ?? {};
      const exit = exits[report.order.id];
      if (!exit) {
        warnings.push(
          `${venue.name} took back ${report.lots} lots of the fill of ${report.order.kind} order ${report.order.id} (${report.order.clientId ?? 'no client id'}), a fill the book does not hold: check the position at the venue`,
        );
        continue;
      }
      const lots = roundLots(Math.min(report.lots, exit.lots));
      const given = givenBack(next, exit, lots, report.order.kind === 'take_profit' && report.order.filled === 0);
      const key = String(exit.position.ticket);
      warnings.push(
        `${venue.name} took back ${lots} lots of the fill of ${report.order.kind === 'stop_loss' ? 'stop' : report.order.kind === 'take_profit' ? 'target' : 'close'} order ${report.order.id} (a bust): position ${exit.position.ticket} holds ${given.position.volume} lots again and is protected for them`,
      );
      next = { ...given.book, exits: { ...exits } };
      const rest = roundLots(exit.lots - lots);
      if (rest > 0) next.exits![report.order.id] = { ...exit, lots: rest, profit: exit.profit - given.profit };
      else delete next.exits![report.order.id];
      if (given.reopened && exit.venueId !== undefined) next.positions![key] = exit.venueId;
      await protect(given.position, next.protection[key]?.orders ?? []);
      continue;
    }
    if (report.type === 'fill_busted') {
      const entry = report.order.clientId;
      const position = next.state.positions.find(
        (p) => p.signalId !== null && entry !== null && clientOrderId(p.signalId, 'o') === entry,
      );
      if (!position) {
        warnings.push(
          `${venue.name} took back ${report.lots} lots of order ${report.order.id} (${entry ?? 'no client id'}), whose position the book does not hold: check the position at the venue`,
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
    const balanceBefore = next.state.balance;
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
    if (filledId !== undefined && report.by !== 'venue')
      next = {
        ...next,
        exits: keptExit(next.exits, filledId, {
          position,
          revision: next.protection[key]?.revision ?? 0,
          ...(next.positions?.[key] !== undefined && { venueId: next.positions[key] }),
          lots: report.volume,
          price,
          profit: step.state.balance - balanceBefore,
        }),
      };
    next = { ...next, state: step.state };
    events.push(...step.events);
    const leftover = (next.protection[key]?.orders ?? []).filter((o) => o.id !== filledId);
    const rest = next.state.positions.find((p) => p.ticket === position.ticket);
    if (rest) {
      // A stop ended (cancelled, expired) having filled part: the rest has no stop at the venue.
      const order = report.order;
      if (report.by === 'stop_loss' && order !== null && order.status === 'cancelled')
        errors.push({
          message: `the stop order ${order.id} of position ${position.ticket} filled ${report.volume} lots, then ended at the venue (cancelled or expired): the ${rest.volume} lots left had no stop there; its stop and targets are placed again for them`,
          fields: {
            position: position.ticket,
            symbol: position.symbol,
            order: order.id,
            filled: report.volume,
            volume: rest.volume,
          },
        });
      await protect(rest, leftover);
      continue;
    }
    await cancelAll(key, leftover);
  }
  return { book: next, events, warnings, errors, unprotected };
}

/**
 * The book with `lots` of an exit's fill given back to its position: the position grows by them,
 * or, gone, comes back with them (its stop, targets and rules as they were before the fill, its
 * protection's revision kept so new client ids follow). The balance gives back their share of the
 * close's profit. A target's fill taken back whole makes that target the next to reach again.
 * No fill goes to the ledger: it has no way to take a recorded close back, and an opening in its
 * place would count the close's profit twice once the position closes again.
 */
function givenBack(
  book: VenueBook,
  exit: ExitFill,
  lots: number,
  targetUndone: boolean,
): { book: VenueBook; position: Position; profit: number; reopened: boolean } {
  const ticket = exit.position.ticket;
  const current = book.state.positions.find((p) => p.ticket === ticket);
  const base = current ?? { ...exit.position, volume: 0 };
  const position: Position = {
    ...base,
    volume: roundLots(base.volume + lots),
    ...(targetUndone && { tpNext: exit.position.tpNext }),
  };
  const profit = exit.lots > 0 ? (exit.profit * lots) / exit.lots : 0;
  const positions = current
    ? book.state.positions.map((p) => (p.ticket === ticket ? position : p))
    : [...book.state.positions, position].sort((a, b) => a.ticket - b.ticket);
  const protection = current
    ? book.protection
    : { ...book.protection, [String(ticket)]: { revision: exit.revision, orders: [] } };
  return {
    book: {
      ...book,
      state: { ...book.state, positions, balance: Math.round((book.state.balance - profit) * 100) / 100 },
      protection,
    },
    position,
    profit,
    reopened: current === undefined,
  };
}

/** `exits` with this order's fill added (a later part of the same order adds its lots), the oldest dropped past KEPT_EXITS. */
function keptExit(exits: VenueBook['exits'], orderId: string, fill: ExitFill): Record<string, ExitFill> {
  const kept = { ...exits };
  const earlier = kept[orderId];
  kept[orderId] = earlier
    ? {
        ...earlier,
        lots: roundLots(earlier.lots + fill.lots),
        price: (earlier.price * earlier.lots + fill.price * fill.lots) / (earlier.lots + fill.lots),
        profit: earlier.profit + fill.profit,
      }
    : fill;
  const ids = Object.keys(kept);
  for (const id of ids.slice(0, Math.max(0, ids.length - KEPT_EXITS))) delete kept[id];
  return kept;
}
