import type { LedgerFunding } from './ledger-funding.js';
import type { LedgerFill } from './ledger-trade.js';

/**
 * A fill as the server keeps it: the agent's report, with what the server knew of its signal when
 * it recorded it (the signal log may forget the signal later; the ledger keeps these).
 */
export interface RecordedFill extends LedgerFill {
  agentId: string;
  accountId: string;
  /** The source of `signalId`, its `comment`, and when it was received; null without a signal. */
  sourceId: string | null;
  strategy: string | null;
  receivedAt: string | null;
}

/** A funding payment as the server keeps it. */
export interface RecordedFunding extends LedgerFunding {
  agentId: string;
  accountId: string;
}
