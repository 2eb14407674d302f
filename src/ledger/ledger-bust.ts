/**
 * The venue took back `lots` of a fill it had reported (a bust: FIX ExecType H, trade cancel),
 * keyed by that fill's venue id: the fill counts only for what is left of it, and not at all when
 * nothing is. A bust may be recorded before its fill: it applies once the fill is recorded.
 */
export interface LedgerBust {
  venueFillId: string;
  lots: number;
  /** When the venue took the fill back. */
  at: string;
}

/** A bust as the server keeps it. */
export interface RecordedBust extends LedgerBust {
  agentId: string;
  accountId: string;
}
