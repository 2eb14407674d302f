import type { RecordedFill, RecordedFunding } from '../ledger/recorded-fill.js';
import { isoTime, isoTimeOrNull } from './iso-time.js';

/** A `ledger_fills` row as both backends read it (times as text or Date). */
export interface LedgerFillRow {
  agent_id: string;
  venue_fill_id: string;
  account_id: string;
  order_id: string;
  symbol: string;
  side: string;
  lots: number;
  price: number;
  fee: number;
  fee_currency: string;
  at: string | Date;
  signal_id: string | null;
  effect: string | null;
  profit: number | null;
  quote: number | null;
  source_id: string | null;
  strategy: string | null;
  received_at: string | Date | null;
}

export interface LedgerFundingRow {
  agent_id: string;
  venue_funding_id: string;
  account_id: string;
  symbol: string;
  amount: number;
  currency: string;
  at: string | Date;
}

export function recordedFillOf(row: LedgerFillRow): RecordedFill {
  return {
    venueFillId: row.venue_fill_id,
    orderId: row.order_id,
    symbol: row.symbol,
    side: row.side as 'buy' | 'sell',
    lots: row.lots,
    price: row.price,
    fee: row.fee,
    feeCurrency: row.fee_currency,
    at: isoTime(row.at),
    signalId: row.signal_id,
    ...(row.effect !== null && { effect: row.effect as 'open' | 'close' }),
    ...(row.profit !== null && { profit: row.profit }),
    ...(row.quote !== null && { quote: row.quote }),
    agentId: row.agent_id,
    accountId: row.account_id,
    sourceId: row.source_id,
    strategy: row.strategy,
    receivedAt: isoTimeOrNull(row.received_at),
  };
}

export function recordedFundingOf(row: LedgerFundingRow): RecordedFunding {
  return {
    venueFundingId: row.venue_funding_id,
    symbol: row.symbol,
    amount: row.amount,
    currency: row.currency,
    at: isoTime(row.at),
    agentId: row.agent_id,
    accountId: row.account_id,
  };
}

/** The WHERE clause of a ledger filter, with `?` or `$n` placeholders. */
export function ledgerWhere(
  filter: { accountId?: string; agentId?: string },
  placeholder: (n: number) => string,
): { where: string; values: string[] } {
  const clauses: string[] = [];
  const values: string[] = [];
  if (filter.accountId !== undefined) {
    values.push(filter.accountId);
    clauses.push(`account_id = ${placeholder(values.length)}`);
  }
  if (filter.agentId !== undefined) {
    values.push(filter.agentId);
    clauses.push(`agent_id = ${placeholder(values.length)}`);
  }
  return { where: clauses.length ? `WHERE ${clauses.join(' AND ')}` : '', values };
}
