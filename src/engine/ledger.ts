/**
 * The working copy of a state during one engine step. applySignal and applyTick open a ledger
 * over the state they are given, change only the ledger (replacing positions and orders with
 * new objects, never editing them), collect the events, and turn it into the next state. A
 * rejected signal simply drops its ledger, so a signal is applied entirely or not at all.
 */
import { conversionRate } from './currency.js';
import type { EngineEvent } from './events.js';
import { resolveInstrument, type InstrumentSpec } from './instruments.js';
import type { Quote, Quotes } from './market.js';
import type { PendingOrder } from './pending-orders.js';
import type { Position } from './positions.js';
import type { EngineConfig, EngineState } from './state.js';
import { brokerSymbol, catalogName } from './symbol-map.js';

export interface Ledger {
  readonly config: EngineConfig;
  readonly time: number;
  balance: number;
  quotes: Quotes;
  positions: Position[];
  orders: PendingOrder[];
  nextTicket: number;
  readonly events: EngineEvent[];
}

export function openLedger(state: EngineState, time: number): Ledger {
  return {
    config: state.config,
    time,
    balance: state.balance,
    quotes: state.quotes,
    positions: state.positions.slice(),
    orders: state.orders.slice(),
    nextTicket: state.nextTicket,
    events: [],
  };
}

export function closeLedger(ledger: Ledger): EngineState {
  return {
    config: ledger.config,
    balance: ledger.balance,
    quotes: ledger.quotes,
    positions: ledger.positions,
    orders: ledger.orders,
    nextTicket: ledger.nextTicket,
  };
}

export function takeTicket(ledger: Ledger): number {
  return ledger.nextTicket++;
}

/** The instrument of a canonical or broker symbol, or null when it is unknown. */
export function instrumentOf(config: EngineConfig, symbol: string): InstrumentSpec | null {
  return resolveInstrument(catalogName(config.symbolMap, symbol), config.instruments);
}

/** Latest quote of a canonical symbol (looked up under its broker name). */
export function quoteOfCanonical(config: EngineConfig, quotes: Quotes, canonical: string): Quote | undefined {
  return quotes[brokerSymbol(config.symbolMap, canonical)];
}

/** Account-currency units per unit of `from`, at the feed's latest rates; null when unknown. */
export function rateToAccount(config: EngineConfig, quotes: Quotes, from: string): number | null {
  return conversionRate(from, config.currency, (pair) => quoteOfCanonical(config, quotes, pair));
}

/**
 * What `lots` of `symbol` at `price` are worth in the account currency (lots × contract size ×
 * price × rate): the notional a risk rule limits. Null when the instrument or the rate is unknown.
 */
export function notionalOf(state: EngineState, symbol: string, lots: number, price: number): number | null {
  const spec = instrumentOf(state.config, symbol);
  const rate = spec === null ? null : rateToAccount(state.config, state.quotes, spec.quoteCurrency);
  return spec === null || rate === null ? null : lots * spec.contractSize * price * rate;
}
