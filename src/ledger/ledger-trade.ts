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
export interface LedgerTrade {
  id: string;
  agentId: string;
  accountId: string;
  sourceId: string | null;
  strategy: string | null /* the signal's comment */;
  symbol: string;
  side: 'long' | 'short';
  lots: number;
  entryAt: string;
  entryPrice: number;
  exitAt: string | null;
  exitPrice: number | null;
  fees: number;
  funding: number;
  realizedProfit: number | null /* account currency, net of fees and funding */;
  openingSignalId: string | null;
  closingSignalIds: string[];
  quoteAtReceipt: number | null;
  receivedAt: string | null;
  firstFillAt: string | null;
}
