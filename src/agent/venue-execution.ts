import {
  applySignal,
  describeEvents,
  notionalOf,
  reviseClose,
  type ClosedEvent,
  type EngineEvent,
  type EngineState,
  type PartialCloseEvent,
  type Position,
  type StepResult,
} from '../engine/index.js';
import type { NormalizedSignal } from '../language/index.js';
import type { AckStatus } from '../protocol/delivery.js';
import { clientOrderId } from './client-order-id.js';
import { coinFeeNote } from './coin-fee-note.js';
import { RiskLimitError, type EntryGuard } from './entry-guard.js';
import { riskRefusal } from '../protocol/risk-refusal.js';
import type { HeldPosition } from '../risk/entry-check.js';
import { takeEntryFill } from './entry-fill.js';
import { SignalExpiredError, type EntryDeadline } from './signal-age.js';
import {
  VenueRefusedError,
  type OrderRequest,
  type Venue,
  type VenueHoldings,
  type VenueOrder,
  type VenueOrderRef,
} from './venue.js';
import { protectionOf, venuePosition, withExits, type ExitFill, type VenueBook } from './venue-book.js';

/** What a signal came to: the acknowledgement's status, message and result. */
export interface ExecutionOutcome {
  status: AckStatus;
  message: string;
  /** `events`: what the engine decided; `orders`: the venue's orders that carried it out, with their ids and fills. */
  result: { events: EngineEvent[]; orders: VenueOrder[] } | null;
}

/**
 * Executes one signal: the engine decides on the book (sizing, stop and target prices, what
 * to close or cancel), then the venue carries each decision out in order. A refusal of the
 * first step leaves everything as it was (rejected, with the venue's reason); a refusal after
 * some steps were carried out fails the signal and says what was done. A stop or target the
 * venue refuses does not undo the position it was for: the outcome says it is unprotected.
 * VenueUnreachableError propagates: the caller retries the whole signal, and the client order
 * ids make the steps already carried out answer the orders they placed. `deadline`: the signal's
 * age, checked immediately before each entry leaves (see signal-age.ts); an entry it holds back
 * is refused as the venue's refusal would be (rejected when it was the first step). `guard`: the
 * signal's risk rules, checked at the same place; its refusal carries the rule in the result.
 */
export async function executeSignal(
  venue: Venue,
  book: VenueBook,
  signal: { id: string; signal: NormalizedSignal; text: string },
  now: number,
  /** The signal may have been carried out in part before (a lost answer, a restart): each order is looked up first. */
  again = false,
  deadline: EntryDeadline | null = null,
  guard: EntryGuard | null = null,
): Promise<{ book: VenueBook; outcome: ExecutionOutcome; unprotected: RefusedProtection[] }> {
  const step = applySignal(book.state, signal.signal, now, { signalId: signal.id, text: signal.text });
  if (step.outcome.status === 'rejected') {
    return {
      book,
      outcome: { status: 'rejected', message: step.outcome.message, result: { events: step.events, orders: [] } },
      unprotected: [],
    };
  }
  const netted = venue.netsPositions ? nettedOpening(step) : null;
  if (netted !== null)
    return {
      book,
      outcome: { status: 'rejected', message: netted, result: { events: step.events, orders: [] } },
      unprotected: [],
    };
  const doubleExit = venue.oneExitOrder === true ? stopAndTarget(venue.name, step) : null;
  if (doubleExit !== null)
    return {
      book,
      outcome: { status: 'rejected', message: doubleExit, result: { events: step.events, orders: [] } },
      unprotected: [],
    };
  const run = new Carrying(venue, book, step, signal.id, again, deadline, guard);
  try {
    await run.all();
  } catch (error) {
    if (
      !(error instanceof VenueRefusedError) &&
      !(error instanceof SignalExpiredError) &&
      !(error instanceof RiskLimitError)
    )
      throw error;
    const refused =
      error instanceof VenueRefusedError ? `${venue.name} refused ${run.current}: ${error.message}` : error.message;
    const risk = error instanceof RiskLimitError ? riskRefusal(error.violation) : {};
    if (run.done === 0) {
      return {
        book: run.untouchedBook(),
        outcome: {
          status: 'rejected',
          message: refused,
          result: { ...risk, events: run.events, orders: run.orders },
        },
        unprotected: [],
      };
    }
    return {
      // What was carried out stays in the book; the rest is dropped with the engine's plan.
      book: run.partialBook(),
      outcome: {
        status: 'failed',
        message: `${describeEvents(run.events)}, but ${refused} after the first ${run.done} step(s) were carried out`,
        result: { ...risk, events: run.events, orders: run.orders },
      },
      unprotected: run.unprotected,
    };
  }
  const notes = run.notes.length ? `; ${run.notes.join('; ')}` : '';
  if (run.uncertain.length > 0) {
    // Neither executed nor rejected can be said: failed, so the trader looks at the broker.
    const done = run.events.length > 0 ? `${describeEvents(run.events)}; ` : '';
    return {
      book: run.book(),
      outcome: {
        status: 'failed',
        message: `${done}not known whether carried out: ${run.uncertain.join('; ')}${notes}`,
        result: { events: run.events, orders: run.orders },
      },
      unprotected: run.unprotected,
    };
  }
  // The events as the venue carried them out (its fill's lots and price), and the message from them.
  return {
    book: run.book(),
    outcome: {
      status: 'executed',
      message: (describeEvents(run.events) || step.outcome.message) + notes,
      result: { events: run.events, orders: run.orders },
    },
    unprotected: run.unprotected,
  };
}

/**
 * Carries out what the engine did on its own at a price (a pending entry reached, a stop or
 * target reached, breakeven or trailing moved the stop): the venue holds the stops and targets
 * already, so only a moved stop, a new position's protection and a closed position's leftover
 * orders need it. A moved stop the venue refuses leaves the old one standing (the new one is
 * placed first): the move stays written down, is named in `refused`, and finishMoves tries it
 * again.
 */
export async function carryOutTick(
  venue: Venue,
  book: VenueBook,
  step: StepResult,
  /** Writes the book down before a stop is moved (the journal), so a restart in the middle finishes the move. */
  intend: (book: VenueBook) => Promise<void> = async () => undefined,
): Promise<{
  book: VenueBook;
  orders: VenueOrder[];
  warnings: string[];
  refused: RefusedMove[];
  unprotected: RefusedProtection[];
}> {
  const next: VenueBook = {
    state: step.state,
    protection: { ...book.protection },
    orders: { ...book.orders },
    positions: { ...book.positions },
  };
  const orders: VenueOrder[] = [];
  const warnings: string[] = [];
  const refused: RefusedMove[] = [];
  const unprotected: RefusedProtection[] = [];
  const protect = async (ticket: number, moving: boolean) => {
    const position = next.state.positions.find((p) => p.ticket === ticket);
    if (!position) return;
    const key = String(ticket);
    const revision = (next.protection[key]?.revision ?? -1) + 1;
    if (moving && next.protection[key]) {
      next.protection[key] = { ...next.protection[key], moving: revision };
      await intend(next);
    }
    let placed: VenueOrder[];
    try {
      placed = await venue.protect(venuePosition(next, position), protectionOf(next, position, revision));
    } catch (error) {
      if (!(error instanceof VenueRefusedError)) throw error;
      // The venue cancelled the orders replaced before it refused: none stands, as for a new position's.
      if (error.protectionCancelled) next.protection[key] = { revision, orders: [] };
      if (!moving || next.protection[key]?.moving === undefined) {
        // A stop refused with none standing: the position is unprotected, and the agent's protection pass tries again.
        unprotected.push({
          position: ticket,
          symbol: position.symbol,
          reason: `${venue.name} refused its stop or targets: ${error.message}`,
        });
        warnings.push(
          `${venue.name} refused the stop or targets of position ${ticket}: ${error.message}; the position is NOT protected, and they are tried again at the next pass`,
        );
        return;
      }
      const move = refusedMove(venue, position, error);
      refused.push(move);
      warnings.push(`${move.reason}; the previous stop stays at the venue, and the move is tried again`);
      return;
    }
    orders.push(...placed);
    next.protection[key] = { revision, orders: placed.map(orderRef) };
  };
  let held: VenueHoldings | null = null;
  for (const event of step.events) {
    if (event.type === 'order_filled') {
      delete next.orders[String(event.order)];
      await protect(event.position, false);
    } else if (event.type === 'sl_moved') {
      await protect(event.position, true);
    } else if (event.type === 'closed') {
      // The book saw the stop or the last target reached at the prices it read. Only when the
      // venue confirms the position is gone are its leftover orders cancelled: a stop cancelled
      // on a position the venue still holds would leave it unprotected.
      const was = book.state.positions.find((p) => p.ticket === event.position);
      held ??= await venue.open();
      const stillHeld =
        held.positions === null ||
        (was !== undefined && held.positions.some((p) => p.symbol === was.symbol && p.side === was.side));
      if (stillHeld) {
        warnings.push(
          `position ${event.position} reached its ${event.reason === 'sl' ? 'stop' : 'last target'} at the prices the agent read, but the venue ${held.positions === null ? 'cannot say whether it still holds it' : 'still holds a position on that side'}: its stop and target orders stay on the venue`,
        );
      } else {
        for (const order of next.protection[String(event.position)]?.orders ?? []) await venue.cancel(order);
      }
      delete next.protection[String(event.position)];
    }
  }
  return { book: next, orders, warnings, refused, unprotected };
}

/** A position's stop or targets the venue refused when they were first placed: the position, and the venue's reason. */
export type RefusedProtection = RefusedMove;

/** A stop move the venue refused: the position, and the venue's reason in a sentence. */
export interface RefusedMove {
  position: number;
  symbol: string;
  reason: string;
}

function refusedMove(venue: Venue, position: Position, error: VenueRefusedError): RefusedMove {
  return {
    position: position.ticket,
    symbol: position.symbol,
    reason: `${venue.name} refused moving the stop of position ${position.ticket} to ${position.sl}: ${error.message}`,
  };
}

/**
 * Finishes the stop moves written down but not known to be done (the agent stopped, or the venue
 * failed, between deciding and the venue's answer): the new revision's orders are looked up by
 * their client ids and placed only when missing, then the orders they replace are cancelled (an
 * order already gone is no error). So the position ends with exactly one stop, at the new level.
 * A move the venue refuses stays written down (the old stop, placed first, still stands) and is
 * tried again; `refused` names its symbol, whose quotes must wait for it: a later move of the
 * same position would reuse its client ids.
 */
export async function finishMoves(
  venue: Venue,
  book: VenueBook,
): Promise<{ book: VenueBook; orders: VenueOrder[]; refused: RefusedMove[] }> {
  const next: VenueBook = { ...book, protection: { ...book.protection } };
  const orders: VenueOrder[] = [];
  const refused: RefusedMove[] = [];
  for (const [key, entry] of Object.entries(book.protection)) {
    if (entry.moving === undefined) continue;
    const position = book.state.positions.find((p) => String(p.ticket) === key);
    if (!position) {
      delete next.protection[key];
      continue;
    }
    try {
      const placed = await venue.protect(venuePosition(next, position), {
        ...protectionOf(next, position, entry.moving),
        mayExist: true,
      });
      orders.push(...placed);
      next.protection[key] = { revision: entry.moving, orders: placed.map(orderRef) };
    } catch (error) {
      if (!(error instanceof VenueRefusedError)) throw error;
      // The orders replaced were cancelled before the refusal: the protection pass places them again.
      if (error.protectionCancelled) next.protection[key] = { revision: entry.moving, orders: [] };
      else refused.push(refusedMove(venue, position, error));
    }
  }
  return { book: next, orders, refused };
}

/** Whether a stop move was written down and not finished. */
export function hasUnfinishedMoves(book: VenueBook): boolean {
  return Object.values(book.protection).some((entry) => entry.moving !== undefined);
}

/**
 * On a venue that nets positions per symbol, an opening against a position of the other side
 * that stays open would reduce it instead of opening beside it, and the book would no longer
 * match the venue: refused, saying how to do it.
 */
function nettedOpening(step: StepResult): string | null {
  for (const event of step.events) {
    if (event.type !== 'opened' && event.type !== 'order_placed') continue;
    const symbol = event.symbol;
    const other = step.state.positions.find((p) => p.symbol === symbol && p.side !== event.side);
    if (other) {
      return `the account keeps one net position per symbol (one-way mode) and position ${other.ticket} (${other.side} ${other.volume} ${symbol}) is open: a ${event.side} would reduce it rather than open beside it. Close it first (exop, or ${event.side === 'buy' ? 'closeshortbuy' : 'closelongsell'}) or switch the exchange account to hedge mode and run with --position-mode hedge`;
    }
  }
  return null;
}

/**
 * On a venue that holds one closing order per holding (spot), an opening with both a stop loss
 * and a take-profit would get one of them refused once the position is open, leaving it less
 * protected than the signal said: refused before anything is sent, saying what to send instead.
 */
function stopAndTarget(venueName: string, step: StepResult): string | null {
  for (const event of step.events) {
    const asked =
      event.type === 'opened'
        ? step.state.positions.find((p) => p.ticket === event.position)
        : event.type === 'order_placed'
          ? step.state.orders.find((o) => o.ticket === event.order)
          : undefined;
    if (asked && asked.sl !== null && asked.tp.length > 0) {
      return `${venueName} trades a spot market here, where each open sell order locks the coins it sells: a stop loss and a take-profit on the same ${asked.symbol} cannot both be held by the exchange, and the position would be left without one of them. Send the stop loss or the take-profit levels, not both, or trade the perpetual (--market swap), where both are reduce-only orders`;
    }
  }
  return null;
}

/** One signal's steps, carried out one by one; knows how far it got. */
class Carrying {
  readonly orders: VenueOrder[] = [];
  readonly notes: string[] = [];
  /** Positions opened or kept whose stop or targets the venue refused, with its reason. */
  readonly unprotected: RefusedProtection[] = [];
  /** Closes the venue could not say were filled (see VenueOrder.uncertain). */
  readonly uncertain: string[] = [];
  /** The engine's events, an opening's replaced by what the venue filled (lots, average price). */
  readonly events: EngineEvent[];
  /** Steps carried out. */
  done = 0;
  /** The step being carried out, for the message of a refusal. */
  current = 'the order';
  private state: EngineState;
  private readonly protection: VenueBook['protection'];
  private readonly pending: VenueBook['orders'];
  private readonly positionIds: Record<string, string>;
  private closes = 0;
  /** The closes' fills, by venue order id, kept in the book for a bust of them (VenueBook.exits). */
  private readonly exits: Record<string, ExitFill> = {};
  /** Tickets of positions and orders the steps carried out so far touched, for a partial book. */
  private readonly touched = new Set<number>();
  /** The positions held at this point of the signal, by ticket: what the risk check counts. */
  private readonly held = new Map<number, HeldPosition>();

  constructor(
    private readonly venue: Venue,
    private readonly before: VenueBook,
    private readonly step: StepResult,
    private readonly signalId: string,
    private readonly again: boolean,
    private readonly deadline: EntryDeadline | null,
    private readonly guard: EntryGuard | null,
  ) {
    for (const p of before.state.positions) this.held.set(p.ticket, { symbol: p.symbol, side: p.side, lots: p.volume });
    this.state = step.state;
    this.events = [...step.events];
    this.protection = { ...before.protection };
    this.pending = { ...before.orders };
    this.positionIds = { ...before.positions };
  }

  async all(): Promise<void> {
    for (const event of this.step.events) {
      await this.carryOut(event);
      this.done += 1;
    }
  }

  book(): VenueBook {
    return withExits(
      { state: this.state, protection: this.protection, orders: this.pending, positions: this.positionIds },
      this.before.exits,
      this.exits,
    );
  }

  /**
   * The venue cancelled the position's stop and targets, then refused its close: the book holds
   * none for it any more (its revision kept, so new ones get client ids of their own), and the
   * protection pass places them again.
   */
  private protectionGone(ticket: number): void {
    const key = String(ticket);
    const held = this.protection[key];
    if (held) this.protection[key] = { revision: held.revision, orders: [] };
  }

  /** The book before the signal, its protection as the steps left it (a refused close may have cancelled some). */
  untouchedBook(): VenueBook {
    return { ...this.before, protection: this.protection };
  }

  /** The book before the signal with the steps that were carried out applied. */
  partialBook(): VenueBook {
    const after = this.state;
    const was = this.before.state;
    const positions = [
      ...was.positions.filter((p) => !this.touched.has(p.ticket)),
      ...after.positions.filter((p) => this.touched.has(p.ticket)),
    ].filter((p, i, all) => all.findIndex((q) => q.ticket === p.ticket) === i);
    const orders = [
      ...was.orders.filter((o) => !this.touched.has(o.ticket)),
      ...after.orders.filter((o) => this.touched.has(o.ticket)),
    ].filter((o, i, all) => all.findIndex((q) => q.ticket === o.ticket) === i);
    const closed = new Set(
      this.events
        .filter((e) => e.type === 'closed' && this.touched.has(e.position))
        .map((e) => (e as { position: number }).position),
    );
    return withExits(
      {
        state: { ...after, positions: positions.filter((p) => !closed.has(p.ticket)), orders },
        protection: this.protection,
        orders: this.pending,
        positions: this.positionIds,
      },
      this.before.exits,
      this.exits,
    );
  }

  private async carryOut(event: EngineEvent): Promise<void> {
    const venue = this.venue;
    switch (event.type) {
      case 'partial_close':
      case 'closed': {
        const position = this.before.state.positions.find((p) => p.ticket === event.position)!;
        this.current = `closing ${event.volume} of position ${event.position} (${position.side} ${position.symbol})`;
        this.closes += 1;
        const order = await venue
          .close(
            venuePosition(this.before, position),
            event.volume,
            clientOrderId(this.signalId, `c${this.closes}`),
            this.again,
          )
          .catch((error: unknown) => {
            if (error instanceof VenueRefusedError && error.protectionCancelled) this.protectionGone(position.ticket);
            throw error;
          });
        this.orders.push(order);
        if (order.uncertain !== undefined) {
          // The venue holds the position no more, and cannot say whether this close emptied it:
          // it leaves the book, and the outcome claims neither the close nor its refusal.
          this.touched.add(position.ticket);
          this.state = { ...this.state, positions: this.state.positions.filter((p) => p.ticket !== position.ticket) };
          this.events.splice(this.events.indexOf(event), 1);
          this.uncertain.push(
            `closing ${event.volume} of position ${event.position} (${position.side} ${position.symbol}): ${order.uncertain}`,
          );
          delete this.protection[String(position.ticket)];
          return;
        }
        // Ended without a single lot: the position is as it was, with its stop and targets.
        refuseUnfilled(order, event.volume);
        this.touched.add(position.ticket);
        const closed = this.adoptClose(position, event, order);
        const key = String(position.ticket);
        this.exits[order.id] = {
          position,
          revision: this.protection[key]?.revision ?? 0,
          ...(this.positionIds[key] !== undefined && { venueId: this.positionIds[key] }),
          lots: closed.volume,
          price: closed.price,
          profit: closed.profit,
        };
        const left = this.state.positions.find((p) => p.ticket === position.ticket);
        if (closed.type === 'closed' || !left) this.held.delete(position.ticket);
        else this.held.set(position.ticket, { symbol: left.symbol, side: left.side, lots: left.volume });
        if (closed.type === 'closed') {
          for (const held of this.protection[String(position.ticket)]?.orders ?? [])
            await this.quietly(
              async () => void (await venue.cancel(held)),
              "cancel a closed position's stop or target",
            );
          delete this.protection[String(position.ticket)];
        } else {
          // What the venue still holds keeps (or gets back) a stop and targets of exactly its lots.
          const rest = this.state.positions.find((p) => p.ticket === position.ticket);
          if (rest) await this.protect(rest);
          if (closed.requested !== undefined && rest) {
            this.notes.push(
              `${venue.name} filled ${closed.volume} of the ${closed.requested} lots asked: position ${position.ticket} stays open with ${rest.volume} lots`,
            );
          }
        }
        return;
      }
      case 'order_cancelled': {
        const held = this.pending[String(event.order)];
        this.current = `cancelling order ${event.order}`;
        const ended = held ? await venue.cancel(held) : undefined;
        delete this.pending[String(event.order)];
        this.touched.add(event.order);
        if (ended && ended.filled > 0) await this.keepFilled(event.order, ended, event.time);
        return;
      }
      case 'opened': {
        this.current = `the ${event.side} market order of ${event.volume} ${event.symbol}`;
        const position = this.state.positions.find((p) => p.ticket === event.position)!;
        const order = await this.enter(
          {
            clientId: clientOrderId(this.signalId, 'o'),
            symbol: event.symbol,
            side: event.side,
            kind: 'market',
            volume: event.volume,
            price: null,
          },
          event.price,
        );
        this.orders.push(order);
        // Ended without a single lot (no liquidity): there is no position, whatever was asked.
        refuseUnfilled(order, event.volume);
        this.touched.add(position.ticket);
        if (order.positionId !== undefined) this.positionIds[String(position.ticket)] = order.positionId;
        const filled = this.adoptFill(position, order);
        this.held.set(filled.ticket, { symbol: filled.symbol, side: filled.side, lots: filled.volume });
        if (filled.sl !== null || filled.tp.length > 0) await this.protect(filled);
        return;
      }
      case 'order_placed': {
        this.current = `the ${event.side} ${event.kind} order of ${event.volume} ${event.symbol} at ${event.price}`;
        const order = await this.enter(
          {
            clientId: clientOrderId(this.signalId, 'o'),
            symbol: event.symbol,
            side: event.side,
            kind: event.kind,
            volume: event.volume,
            price: event.price,
          },
          event.price,
        );
        this.orders.push(order);
        // Found ended at a retry (cancelled by hand, expired) with nothing filled: no order stands.
        refuseUnfilled(order, event.volume);
        this.pending[String(event.order)] = orderRef(order);
        this.touched.add(event.order);
        return;
      }
      default:
        return;
    }
  }

  /**
   * Sends an entry, the signal's age checked immediately before it leaves. Expired, no entry
   * leaves; one that may have left before (a lost answer, a restart) is looked up, and if the
   * venue has it, it is the signal's outcome (a position the book must not miss).
   */
  private async enter(request: Omit<OrderRequest, 'mayExist'>, price: number): Promise<VenueOrder> {
    const expired = this.deadline?.refusal(this.current) ?? null;
    const violation =
      expired === null
        ? (this.guard?.check({
            symbol: request.symbol,
            side: request.side,
            kind: request.kind,
            lots: request.volume,
            notional: notionalOf(this.state, request.symbol, request.volume, price),
            held: [...this.held.values()],
          }) ?? null)
        : null;
    if (expired === null && violation === null) return this.venue.place({ ...request, mayExist: this.again });
    // Sent before (a lost answer, a restart) and standing at the venue: that order is the outcome.
    const found = this.again ? await this.venue.find(request) : null;
    if (found === null) throw violation === null ? new SignalExpiredError(expired!) : new RiskLimitError(violation);
    this.notes.push(
      `${violation === null ? 'the signal had expired' : `${violation.rule} refused the entry`} when the agent came back to it, but ${this.venue.name} had its order ${found.id} (sent before): the outcome is that order`,
    );
    return found;
  }

  /**
   * The venue's fill replaces the engine's assumed one (price; lots when it filled fewer), in the
   * book and in the opening's event, so the outcome says what the account holds: a partial fill
   * keeps the lots asked for beside the lots filled ("opened buy 0.12 of 0.2 …").
   */
  private adoptFill(position: Position, order: VenueOrder): Position {
    const { price, volume: filled } = venueFill(order, position.volume, position.price);
    // A fee taken from the coins bought: the position is what the account keeps of them.
    const volume = order.feeInCoin === undefined ? filled : Math.min(filled, order.feeInCoin.kept);
    if (order.feeInCoin !== undefined) this.notes.push(coinFeeNote(this.venue.name, order));
    if (price === position.price && volume === position.volume) return position;
    const adopted: Position = { ...position, price, volume, originalVolume: volume };
    this.state = {
      ...this.state,
      positions: this.state.positions.map((p) => (p.ticket === position.ticket ? adopted : p)),
    };
    const at = this.events.findIndex((e) => e.type === 'opened' && e.position === position.ticket);
    const event = this.events[at];
    if (event?.type === 'opened')
      this.events[at] = { ...event, price, volume, ...(filled !== position.volume && { requested: position.volume }) };
    return adopted;
  }

  /**
   * The venue's fill of a close replaces the engine's assumed one (price; lots when it filled
   * fewer), in the book and in the close's event: a close filled in part leaves the position
   * open with the lots the venue still holds ("closed 0.03 of 0.1 lots of position 4 …").
   */
  private adoptClose(
    was: Position,
    event: PartialCloseEvent | ClosedEvent,
    order: VenueOrder,
  ): PartialCloseEvent | ClosedEvent {
    const { price, volume } = venueFill(order, event.volume, event.price);
    if (order.average === null && order.filled > 0) {
      this.notes.push(
        `${this.venue.name} did not say the price it closed position ${was.ticket} at: the profit is at the agent's price ${price}`,
      );
    }
    if (price === event.price && volume === event.volume) return event;
    const revised = reviseClose(this.state, was, event, { volume, price });
    this.state = revised.state;
    const at = this.events.indexOf(event);
    if (at >= 0) this.events[at] = revised.event;
    return revised.event;
  }

  private async protect(position: Position): Promise<void> {
    const key = String(position.ticket);
    const revision = (this.protection[key]?.revision ?? -1) + 1;
    const book = { state: this.state, protection: this.protection, orders: this.pending, positions: this.positionIds };
    try {
      const placed = await this.venue.protect(venuePosition(book, position), {
        ...protectionOf(book, position, revision),
        mayExist: this.again,
      });
      this.orders.push(...placed);
      this.protection[key] = { revision, orders: placed.map(orderRef) };
    } catch (error) {
      if (!(error instanceof VenueRefusedError)) throw error;
      if (error.protectionCancelled) this.protection[key] = { revision, orders: [] };
      const reason = `${this.venue.name} refused its stop or targets: ${error.message}`;
      this.notes.push(`position ${position.ticket} is NOT protected: ${reason}`);
      this.unprotected.push({ position: position.ticket, symbol: position.symbol, reason });
    }
  }

  /**
   * A cancelled entry that had filled in part: its lots stay, as the position the venue's
   * reports opened (grown to what filled by the cancel) or a new one, protected for exactly them.
   */
  private async keepFilled(ticket: number, order: VenueOrder, time: number): Promise<void> {
    // The engine dropped the order with the cancel; a first fill needs it back to open its position.
    const dropped = this.before.state.orders.find((o) => o.ticket === ticket);
    const state = dropped ? { ...this.state, orders: [...this.state.orders, dropped] } : this.state;
    const step = takeEntryFill(state, order, dropped ? ticket : undefined, false, time);
    if (step.position === null) return;
    this.state = step.state;
    this.touched.add(step.position);
    const position = this.state.positions.find((p) => p.ticket === step.position)!;
    this.notes.push(
      `order ${ticket} had filled ${order.filled} of its ${order.volume} lots when it was cancelled: position ${position.ticket} holds them`,
    );
    if (step.lots > 0 && (position.sl !== null || position.tp.length > 0)) await this.protect(position);
  }

  private async quietly(action: () => Promise<void>, what: string): Promise<void> {
    try {
      await action();
    } catch (error) {
      if (!(error instanceof VenueRefusedError)) throw error;
      this.notes.push(`could not ${what}: ${error.message}`);
    }
  }
}

/** An order that ended without a single lot (cancelled or rejected) is the venue's refusal, with its reason. */
function refuseUnfilled(order: VenueOrder, volume: number): void {
  if (order.filled === 0 && (order.status === 'cancelled' || order.status === 'rejected')) {
    throw new VenueRefusedError(
      `it filled none of the ${volume} lots (the order ended ${order.status}${order.reason ? `: ${order.reason}` : ''})`,
    );
  }
}

/** What the venue made of an order the engine assumed filled whole at `price`: its average price, and its lots when it filled fewer. */
function venueFill(order: VenueOrder, volume: number, price: number): { volume: number; price: number } {
  return { price: order.average ?? price, volume: order.filled > 0 && order.filled < volume ? order.filled : volume };
}

function orderRef(order: VenueOrder): VenueOrderRef {
  return order.trigger ? { id: order.id, symbol: order.symbol, trigger: true } : { id: order.id, symbol: order.symbol };
}
