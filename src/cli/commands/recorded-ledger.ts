import type { LedgerTrade } from '../../ledger/ledger-trade.js';
import { buildTrades } from '../../ledger/trade-builder.js';
import type { Store } from '../../store/store.js';

/** The trades a source's signals opened on the account's agents over a period, as the ledger recorded them. */
export interface RecordedLedgerQuery {
  accountId: string;
  sourceId: string;
  /** ISO times: `from` included, `until` excluded. */
  from: string;
  until: string;
}

/**
 * The ledger's real trades for `simulate --from-log` to set beside the replay: every trade of the
 * source's signals opened or closed in the period, built from the fills the account's agents
 * reported. Null when the ledger holds no fill of the account at all (nothing to compare with).
 */
export async function recordedLedgerTrades(store: Store, query: RecordedLedgerQuery): Promise<LedgerTrade[] | null> {
  const fills = await store.ledger.fills({ accountId: query.accountId });
  if (fills.length === 0) return null;
  const funding = await store.ledger.funding({ accountId: query.accountId });
  const busts = await store.ledger.busts({ accountId: query.accountId });
  const within = (at: string | null) => at !== null && at >= query.from && at < query.until;
  return buildTrades(fills, funding, busts).filter(
    (trade) => trade.sourceId === query.sourceId && (within(trade.entryAt) || within(trade.exitAt)),
  );
}
