/**
 * A tick: the new quote replaces the symbol's last one; then the symbol's pending orders
 * whose entry it reaches fill (oldest first) where the engine fills entries (entry-fills.ts),
 * and every open position on the symbol, those just filled included, is managed (stop,
 * targets, breakeven, trailing; see management.ts).
 */
import type { EntryFills } from './entry-fills.js';
import type { EngineEvent } from './events.js';
import { closeLedger, instrumentOf, openLedger, takeTicket, type Ledger } from './ledger.js';
import { managePosition } from './management.js';
import { fillPrice, type Quote } from './market.js';
import { newPosition, openedEvent } from './opening.js';
import { reachesEntry, type PendingOrder } from './pending-orders.js';
import type { Position } from './positions.js';
import type { EngineState } from './state.js';
import { brokerSymbol, canonicalSymbol } from './symbol-map.js';

export interface Tick {
  /** Unix milliseconds. */
  readonly time: number;
  /** Canonical or broker symbol; matched case-insensitively. */
  readonly symbol: string;
  readonly bid: number;
  readonly ask: number;
}

export interface StepResult {
  readonly state: EngineState;
  readonly events: EngineEvent[];
}

/**
 * Throws a RangeError for a tick no feed should produce (non-positive, or bid above ask).
 * `entryFills`: who fills pending entries; `venue` leaves them pending whatever the tick.
 */
export function applyTick(state: EngineState, tick: Tick, entryFills: EntryFills = 'engine'): StepResult {
  const { bid, ask } = tick;
  if (!(Number.isFinite(bid) && Number.isFinite(ask) && bid > 0 && ask >= bid)) {
    throw new RangeError(`a tick needs 0 < bid ≤ ask, got bid ${bid} and ask ${ask} for ${tick.symbol}`);
  }
  const map = state.config.symbolMap;
  const symbol = brokerSymbol(map, canonicalSymbol(map, tick.symbol));
  const quote: Quote = { bid, ask };
  const quotes = { ...state.quotes, [symbol]: quote };
  const concerned = state.orders.some((o) => o.symbol === symbol) || state.positions.some((p) => p.symbol === symbol);
  if (!concerned) return { state: { ...state, quotes }, events: [] };

  const spec = instrumentOf(state.config, symbol);
  // Orders and positions only exist for instruments the catalog knows.
  if (spec === null) throw new Error(`no instrument for ${symbol}`);
  const ledger = openLedger({ ...state, quotes }, tick.time);
  let changed = entryFills === 'engine' && fillOrders(ledger, symbol, quote);
  const kept: Position[] = [];
  for (const position of ledger.positions) {
    const after = position.symbol === symbol ? managePosition(ledger, position, quote, spec) : position;
    if (after !== position) changed = true;
    if (after !== null) kept.push(after);
  }
  // Unchanged positions keep the very same array, so a caller can tell cheaply that nothing moved.
  ledger.positions = changed ? kept : (state.positions as Position[]);
  return { state: closeLedger(ledger), events: ledger.events };
}

/** Fills the orders the quote reaches; answers whether any did. */
function fillOrders(ledger: Ledger, symbol: string, quote: Quote): boolean {
  if (!ledger.orders.some((o) => o.symbol === symbol && reachesEntry(o, quote))) return false;
  const waiting: PendingOrder[] = [];
  for (const order of ledger.orders) {
    if (order.symbol !== symbol || !reachesEntry(order, quote)) {
      waiting.push(order);
      continue;
    }
    const price = fillPrice(order.side, quote);
    const position = newPosition(
      takeTicket(ledger),
      { symbol, side: order.side, volume: order.volume, price, time: ledger.time },
      order,
    );
    ledger.positions.push(position);
    ledger.events.push({ type: 'order_filled', time: ledger.time, order: order.ticket, position: position.ticket, price });
    ledger.events.push(openedEvent(ledger.time, position));
  }
  ledger.orders = waiting;
  return true;
}
