import type { LedgerFunding } from '../ledger/ledger-funding.js';
import type { LedgerFill } from '../ledger/ledger-trade.js';

export type { LedgerFill, LedgerFunding };

/** Where an agent reports the venue's fills and funding payments: `POST`, answered `{recorded, known}`. */
export const FILLS_PATH = '/api/agent/fills';

/**
 * At most this many entries (fills and funding payments together) in one report: a report of that
 * many stays well inside the 64 KiB an agent body may hold. The agent sends more in several.
 */
export const MAX_REPORT_ENTRIES = 100;

/** The body of `POST /api/agent/fills`. */
export interface LedgerReport {
  fills: LedgerFill[];
  funding?: LedgerFunding[];
}
