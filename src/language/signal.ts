/**
 * The normalized signal (docs/signal-language.md): the one form every accepted signal takes, whatever
 * body format it arrived in. Absent fields mean "not given"; the agent applies its defaults.
 */

export const ACTIONS = [
  'buy',
  'sell',
  'closebuy',
  'closesell',
  'closeall',
  'closelongbuy',
  'closelongsell',
  'closeshortbuy',
  'closeshortsell',
  'buylimit',
  'selllimit',
  'buystop',
  'sellstop',
  'cancellong',
  'cancelshort',
  'positionlong',
  'positionshort',
  'positionflat',
] as const;

export type Action = (typeof ACTIONS)[number];

export const VOLUME_TYPES = ['lots', 'pctbal', 'pcteq', 'dollar', 'pctbal_loss', 'pcteq_loss'] as const;
export type VolumeType = (typeof VOLUME_TYPES)[number];

export const PRICE_UNITS = ['pips', 'price', 'percent'] as const;
export type PriceUnit = (typeof PRICE_UNITS)[number];

export interface Volume {
  type: VolumeType;
  value: number;
}

export interface Distance {
  type: PriceUnit;
  value: number;
}

export interface TakeProfitLevel {
  type: PriceUnit;
  value: number;
  /** Percent of the original volume closed at this level. */
  pct: number;
}

export interface Trail {
  trigger: number;
  distance: number;
  step: number;
}

export interface Breakeven {
  trigger: number;
  offset: number;
}

export type CloseAmount = { pct: number } | { lots: number };

export type Opposite = 'exit' | 'exit_and_enter';

export interface NormalizedSignal {
  symbol: string;
  action: Action;
  comment?: string;
  volume?: Volume;
  sl?: Distance;
  tp?: TakeProfitLevel[];
  entry?: Distance;
  trail?: Trail;
  breakeven?: Breakeven;
  close?: CloseAmount;
  opposite?: Opposite;
}

export const PENDING_ACTIONS: readonly Action[] = ['buylimit', 'selllimit', 'buystop', 'sellstop'];
export const CLOSE_ACTIONS: readonly Action[] = ['closebuy', 'closesell', 'closeall'];
export const CANCEL_ACTIONS: readonly Action[] = ['cancellong', 'cancelshort'];
/**
 * Position targets: "make the symbol's position this". Flat closes the symbol's positions and
 * cancels its pending entries; long and short do the same to everything but an open position
 * of their side, and open one (with the opening parameters) only when none is open. Sending
 * one twice changes nothing the second time, so TradingView's {{strategy.market_position}}
 * (long, short, flat) after `position` is correct for entries, exits and reversals alike.
 */
export const POSITION_ACTIONS: readonly Action[] = ['positionlong', 'positionshort', 'positionflat'];

/**
 * Entries: actions that open something whenever they are applied, so a repeat opens it again.
 * Everything else (closing, cancelling, position targets) changes nothing when applied twice.
 */
export function isEntryAction(action: Action): boolean {
  return !CLOSE_ACTIONS.includes(action) && !CANCEL_ACTIONS.includes(action) && !POSITION_ACTIONS.includes(action);
}

export const CLOSE_THEN_OPEN_ACTIONS: readonly Action[] = [
  'closelongbuy',
  'closelongsell',
  'closeshortbuy',
  'closeshortsell',
];
