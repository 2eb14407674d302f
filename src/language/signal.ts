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
export const CLOSE_THEN_OPEN_ACTIONS: readonly Action[] = [
  'closelongbuy',
  'closelongsell',
  'closeshortbuy',
  'closeshortsell',
];
