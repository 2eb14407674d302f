import type { LedgerFunding } from '../ledger/ledger-funding.js';
import type { LedgerFill } from '../ledger/ledger-trade.js';
import type { RecordedFill, RecordedFunding } from '../ledger/recorded-fill.js';

/** What the room takes (as agents report it) and gives (with what the server copied), for its backends. */
export type { LedgerFill, LedgerFunding, RecordedFill, RecordedFunding };

/** The agent a report came from. */
export interface LedgerAgent {
  id: string;
  accountId: string;
}

/** Whose ledger: an account's (every agent of it) or one agent's. */
export interface LedgerFilter {
  accountId?: string;
  agentId?: string;
}

/** What a report came to: entries recorded now, and entries recorded before (sent again). */
export interface LedgerRecordOutcome {
  recorded: number;
  known: number;
}

/**
 * The trader's ledger: the fills and funding payments agents report, each keyed by the agent and
 * the venue's id for it. The trades are built from them (src/ledger/trade-builder.ts), never stored.
 */
export interface Ledger {
  /**
   * Records what one agent reported. An entry whose venue id this agent reported before is left as
   * it was (the agent sends again what it did not see answered). A fill's signal (when it is one of
   * the agent's account) gives the fill its source, strategy (`comment`) and time of receipt.
   * Committed before it resolves.
   */
  record(
    agent: LedgerAgent,
    fills: readonly LedgerFill[],
    funding: readonly LedgerFunding[],
    recordedAt: string,
  ): Promise<LedgerRecordOutcome>;
  /** The fills in the order they were recorded. */
  fills(filter: LedgerFilter): Promise<RecordedFill[]>;
  /** The funding payments in the order they were recorded. */
  funding(filter: LedgerFilter): Promise<RecordedFunding[]>;
}
