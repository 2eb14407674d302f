import type { SignalStatus } from './records.js';

/**
 * How a signal's status is stored, in both stores: the `status` column keeps the values it was
 * created with ('queued' for every entry answered 202, 'rejected'), and `duplicate_of` marks a
 * duplicate. Rewriting a large log's rows to rename a value was not worth it.
 */
export function signalStatusOf(stored: string, duplicateOf: string | null): SignalStatus {
  if (duplicateOf !== null) return 'duplicate';
  return stored === 'rejected' ? 'rejected' : 'accepted';
}

/**
 * The conditions on a `signals` row (columns unqualified) that select `status`; each is served
 * in log order: rejected and duplicate entries (a small share) by their partial indexes
 * (`signals_rejected_log`, `signals_duplicate_log`), accepted ones (nearly all) by the log's own
 * index, checking each row. The literals matter: a partial index serves only a query that
 * names its condition.
 */
export function storedSignalStatus(status: SignalStatus): string[] {
  switch (status) {
    case 'accepted':
      return ["status = 'queued'", 'duplicate_of IS NULL'];
    case 'rejected':
      return ["status = 'rejected'"];
    case 'duplicate':
      return ['duplicate_of IS NOT NULL'];
  }
}
