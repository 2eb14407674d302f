/**
 * One fill as the venue reported it, keyed by the venue's own id, with the signal it belongs to
 * (null when the venue filled an order no signal placed, such as a stop or a target the venue holds).
 */
export interface LedgerFill {
  venueFillId: string;
  orderId: string;
  symbol: string;
  side: 'buy' | 'sell';
  lots: number;
  price: number;
  fee: number;
  feeCurrency: string;
  at: string;
  signalId: string | null;
  /**
   * Whether the fill opened lots or closed lots of an earlier position. A venue holding positions
   * apart (the paper account) may hold a buy and a sell at once, so the side alone cannot say.
   * Absent: a fill closes what is open on the other side first (a netting venue).
   */
  effect?: 'open' | 'close';
  /**
   * A closing fill's profit before fees as the venue (or the paper engine) booked it, in the account
   * currency. Absent: the trade's profit is the price difference times the lots.
   */
  profit?: number | null;
  /** An opening fill: the venue's quote on the fill's side when the agent took its signal. */
  quote?: number | null;
}

/**
 * One trade of the ledger: lots opened by fills on one side and closed (or not yet) by fills on the
 * other, first in first out per symbol and side; a partial close splits a trade in two.
 */
export interface LedgerTrade {
  id: string;
  agentId: string;
  accountId: string;
  sourceId: string | null;
  /** The opening signal's `comment`. */
  strategy: string | null;
  symbol: string;
  side: 'long' | 'short';
  lots: number;
  entryAt: string;
  entryPrice: number;
  exitAt: string | null;
  exitPrice: number | null;
  fees: number;
  funding: number;
  /** In the account currency, net of fees and funding; null while the trade is open. */
  realizedProfit: number | null;
  openingSignalId: string | null;
  closingSignalIds: string[];
  quoteAtReceipt: number | null;
  receivedAt: string | null;
  firstFillAt: string | null;
}
