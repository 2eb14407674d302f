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
