/**
 * The engine's state: one paper account. Plain JSON-serializable data (no Maps, no classes,
 * no functions), so the paper agent can write it to disk and read it back. The engine never
 * mutates a state it is given; every step returns a new one sharing what did not change.
 */
import type { InstrumentOverride, InstrumentOverrides } from './instruments.js';
import type { Quotes } from './market.js';
import type { PendingOrder } from './pending-orders.js';
import type { Position } from './positions.js';
import { createSymbolMap, type SymbolMap } from './symbol-map.js';

export interface EngineConfig {
  /** Account currency, ISO code upper case. */
  readonly currency: string;
  /** Per-symbol instrument overrides, keyed by canonical symbol upper case. */
  readonly instruments: InstrumentOverrides;
  readonly symbolMap: SymbolMap;
  /** Lots for a signal without volume; null: the instrument's minimum lot. */
  readonly defaultVolumeLots: number | null;
}

export interface EngineState {
  readonly config: EngineConfig;
  readonly balance: number;
  /** Latest quote per broker symbol. */
  readonly quotes: Quotes;
  /** Open positions, oldest first. */
  readonly positions: readonly Position[];
  /** Pending orders, oldest first. */
  readonly orders: readonly PendingOrder[];
  /** The next ticket number for a position or order. */
  readonly nextTicket: number;
}

export interface EngineOptions {
  balance: number;
  /** Default USD. */
  currency?: string;
  instruments?: Readonly<Record<string, InstrumentOverride>>;
  /** Ticker → venue symbol, e.g. { EURUSD: 'EURUSD.m' } (see symbol-map.ts). */
  symbolMap?: Readonly<Record<string, string>>;
  defaultVolumeLots?: number | null;
}

/** A fresh account. Throws on a configuration no account could run with. */
export function createEngineState(options: EngineOptions): EngineState {
  const currency = (options.currency ?? 'USD').trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) throw new RangeError(`currency must be a 3-letter code, got "${options.currency}"`);
  if (!Number.isFinite(options.balance) || options.balance < 0) {
    throw new RangeError(`balance must be a finite number ≥ 0, got ${options.balance}`);
  }
  const defaultLots = options.defaultVolumeLots ?? null;
  if (defaultLots !== null && !(Number.isFinite(defaultLots) && defaultLots > 0)) {
    throw new RangeError(`the default volume must be a positive number of lots, got ${defaultLots}`);
  }
  const instruments: Record<string, InstrumentOverride> = {};
  for (const [symbol, override] of Object.entries(options.instruments ?? {})) {
    instruments[symbol.trim().toUpperCase()] = override;
  }
  return {
    config: {
      currency,
      instruments,
      symbolMap: createSymbolMap(options.symbolMap, instruments),
      defaultVolumeLots: defaultLots,
    },
    balance: options.balance,
    quotes: {},
    positions: [],
    orders: [],
    nextTicket: 1,
  };
}
