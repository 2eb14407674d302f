/**
 * Who fills pending entries (limit and stop orders waiting for their price).
 *
 * - `engine`: a tick that reaches an entry fills it, at that tick's price. The engine is the
 *   market: the paper account, `simulate`, backtests.
 * - `venue`: a real venue holds the order and fills it by its own rules (its queue, its prices,
 *   partial fills, or not at all when the touch was too brief). A tick only manages the open
 *   positions; the entry stays pending until the venue reports its fill (applyFill). A fill the
 *   engine assumed from a quote would be a position the venue may not hold, protected before the
 *   venue has said which position it is.
 */
export type EntryFills = 'engine' | 'venue';
