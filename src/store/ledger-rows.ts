import { isoTime, isoTimeOrNull } from './iso-time.js';
import type {
  LedgerAgent,
  LedgerBust,
  LedgerFill,
  LedgerFunding,
  RecordedBust,
  RecordedFill,
  RecordedFunding,
} from './ledger.js';

/**
 * A reported fill's own columns of `ledger_fills`, in the order `fillValues` gives them; each
 * backend adds what it copies from the fill's signal (source, strategy, receipt) and `recorded_at`.
 */
export const FILL_COLUMNS =
  'agent_id, venue_fill_id, account_id, order_id, symbol, side, lots, price, fee, fee_currency, at, signal_id, effect, profit, quote';

export function fillValues(agent: LedgerAgent, f: LedgerFill): (string | number | null)[] {
  return [
    agent.id,
    f.venueFillId,
    agent.accountId,
    f.orderId,
    f.symbol,
    f.side,
    f.lots,
    f.price,
    f.fee,
    f.feeCurrency,
    isoTime(f.at),
    f.signalId,
    f.effect ?? null,
    f.profit ?? null,
    f.quote ?? null,
  ];
}

/** The columns of `ledger_funding`, in the order `fundingValues` gives them. */
export const FUNDING_COLUMNS = 'agent_id, venue_funding_id, account_id, symbol, amount, currency, at, recorded_at';

export function fundingValues(agent: LedgerAgent, p: LedgerFunding, recordedAt: string): (string | number)[] {
  return [agent.id, p.venueFundingId, agent.accountId, p.symbol, p.amount, p.currency, isoTime(p.at), recordedAt];
}

/** The columns of `ledger_busts`, in the order `bustValues` gives them. */
export const BUST_COLUMNS = 'agent_id, venue_fill_id, account_id, lots, at, recorded_at';

export function bustValues(agent: LedgerAgent, b: LedgerBust, recordedAt: string): (string | number)[] {
  return [agent.id, b.venueFillId, agent.accountId, b.lots, isoTime(b.at), recordedAt];
}

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

export interface LedgerBustRow {
  agent_id: string;
  venue_fill_id: string;
  account_id: string;
  lots: number;
  at: string | Date;
}

export function recordedBustOf(row: LedgerBustRow): RecordedBust {
  return {
    venueFillId: row.venue_fill_id,
    lots: row.lots,
    at: isoTime(row.at),
    agentId: row.agent_id,
    accountId: row.account_id,
  };
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
