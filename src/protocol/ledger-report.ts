import type { LedgerBust } from '../ledger/ledger-bust.js';
import type { LedgerFunding } from '../ledger/ledger-funding.js';
import type { LedgerFill } from '../ledger/ledger-trade.js';

export type { LedgerBust, LedgerFill, LedgerFunding };

/** Where an agent reports the venue's fills, funding payments and busts: `POST`, answered `{recorded, known}`. */
export const FILLS_PATH = '/api/agent/fills';

/**
 * At most this many entries (fills, funding payments and busts together) in one report: a report of that
 * many stays well inside the 64 KiB an agent body may hold. The agent sends more in several.
 */
export const MAX_REPORT_ENTRIES = 100;

/** The body of `POST /api/agent/fills`. */
export interface LedgerReport {
  fills: LedgerFill[];
  funding?: LedgerFunding[];
  /** Fills the venue took back, by the fill's venue id. Absent: none. */
  busts?: LedgerBust[];
}
