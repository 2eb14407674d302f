import type { LedgerBust, RecordedBust } from '../ledger/ledger-bust.js';
import type { LedgerFunding } from '../ledger/ledger-funding.js';
import type { LedgerFill } from '../ledger/ledger-trade.js';
import type { RecordedFill, RecordedFunding } from '../ledger/recorded-fill.js';

/** What the room takes (as agents report it) and gives (with what the server copied), for its backends. */
export type { LedgerBust, LedgerFill, LedgerFunding, RecordedBust, RecordedFill, RecordedFunding };

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
 * The trader's ledger: the fills, funding payments and busts agents report, each keyed by the agent
 * and the venue's id for it (a bust by the id of the fill it took back). The trades are built from them (src/ledger/trade-builder.ts), never stored.
 */
export interface Ledger {
  /**
   * Records what one agent reported. An entry whose venue id this agent reported before is left as
   * it was (the agent sends again what it did not see answered). A fill's signal (when it is one of
   * the agent's account) gives the fill its source, strategy (`comment`) and time of receipt.
   * A bust is recorded whether its fill is recorded yet or not; its `lots` are those of the fill
   * taken back in all, so one of more lots than recorded replaces it (a second bust of the fill),
   * and one of no more is known. Committed before it resolves.
   */
  record(
    agent: LedgerAgent,
    fills: readonly LedgerFill[],
    funding: readonly LedgerFunding[],
    recordedAt: string,
    busts?: readonly LedgerBust[],
  ): Promise<LedgerRecordOutcome>;
  /** The fills in the order they were recorded. */
  fills(filter: LedgerFilter): Promise<RecordedFill[]>;
  /** The funding payments in the order they were recorded. */
  funding(filter: LedgerFilter): Promise<RecordedFunding[]>;
  /** The busts in the order they were recorded. */
  busts(filter: LedgerFilter): Promise<RecordedBust[]>;
}
