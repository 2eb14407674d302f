import type { Side } from '../engine/index.js';
import type { HeldPosition, RiskViolation } from '../risk/entry-check.js';
import type { VenueOrderKind } from './venue.js';

/** An entry about to leave for the venue, as the risk check sees it. */
export interface PlannedEntry {
  /** The venue's symbol. */
  symbol: string;
  side: Side;
  kind: VenueOrderKind;
  lots: number;
  /** In the account currency; null when the agent cannot convert it. */
  notional: number | null;
  /** The positions the venue holds at this point of the signal (its earlier closes done). */
  held: HeldPosition[];
}

/**
 * The signal's risk rules, checked immediately before each entry leaves (beside its age, see
 * signal-age.ts): closes, cancels, stops and targets never ask it.
 */
export interface EntryGuard {
  /** The rule the entry breaks, or null: it may leave. */
  check(entry: PlannedEntry): RiskViolation | null;
}

/** An entry refused by a risk rule: nothing of it left. */
export class RiskLimitError extends Error {
  override readonly name = 'RiskLimitError';
  constructor(readonly violation: RiskViolation) {
    super(violation.message);
  }
}
