/**
 * Who fills orders when a tick reaches their price: the engine at that tick, or the venue that
 * holds them (and reports the fill later, applied with applyFill).
 *
 * `engine`: the engine is the market (the paper account, `simulate`, backtests). `venue`: a real
 * broker or exchange holds the order and fills it by its own rules (its queue, its prices,
 * partial fills, or not at all when the touch was too brief); the tick leaves it alone. A fill the
 * engine assumed from a quote would be one the venue may not have made, and acting on it (a new
 * position's stop placed before the venue named the position; a target's lots closed twice, once
 * at the quote and once at the venue's report) would put the book and the venue apart.
 */
export type Filler = 'engine' | 'venue';

export interface FillRules {
  /** Pending entries (limit and stop orders waiting for their price). */
  readonly entries: Filler;
  /** The stops and take-profit targets of open positions. Breakeven and trailing are the engine's either way. */
  readonly exits: Filler;
}

/** Everything filled by the engine: the paper account and replays. */
export const ENGINE_FILLS: FillRules = { entries: 'engine', exits: 'engine' };
