import type { LedgerTrade } from '../../ledger/ledger-trade.js';
import type { Store } from '../../store/store.js';

/** The trades a source's signals opened on the account's agents over a period, as the ledger recorded them. */
export interface RecordedLedgerQuery {
  sourceId: string;
  /** ISO times: `from` included, `until` excluded. */
  from: string;
  until: string;
}

/**
 * The ledger's real trades for `simulate --from-log` to set beside the replay, or null when this
 * store keeps no ledger. The ledger (its store room) is issue 49's other half: until it is merged
 * the answer is null and the replay says so in its output. INTEGRATOR: read them from the
 * ledger room here (every trade of the source opened or closed in the period); nothing else changes.
 */
export async function recordedLedgerTrades(_store: Store, _query: RecordedLedgerQuery): Promise<LedgerTrade[] | null> {
  return null;
}
