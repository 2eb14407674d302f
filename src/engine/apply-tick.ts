/**
 * A tick: the new quote replaces the symbol's last one; then the symbol's pending orders
 * whose entry it reaches fill (oldest first) where the engine fills entries (fill-rules.ts),
 * and every open position on the symbol, those just filled included, is managed (stop and
 * targets where the engine fills exits, breakeven, trailing; see management.ts).
 */
import { ENGINE_FILLS, type FillRules } from './fill-rules.js';
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
 * `fills`: who fills entries and exits; what the venue fills, the tick leaves alone.
 */
export function applyTick(state: EngineState, tick: Tick, fills: FillRules = ENGINE_FILLS): StepResult {
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
  let changed = fills.entries === 'engine' && fillOrders(ledger, symbol, quote);
  const kept: Position[] = [];
  for (const position of ledger.positions) {
    const after = position.symbol === symbol ? managePosition(ledger, position, quote, spec, fills.exits) : position;
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
    ledger.events.push({
      type: 'order_filled',
      time: ledger.time,
      order: order.ticket,
      position: position.ticket,
      price,
    });
    ledger.events.push(openedEvent(ledger.time, position));
  }
  ledger.orders = waiting;
  return true;
}
