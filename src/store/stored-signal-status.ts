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
 * by an index in log order (`signals_status_log`, `signals_duplicate_log`).
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
