import type { Usage } from './records.js';

/** What accounts used of their quota (charged by the ingest). */
export interface QuotaUsage {
  /** Usage of the account in `period` (`YYYY-MM`); `used` is 0 when nothing was charged yet. Null when no such account. */
  get(accountId: string, period: string): Promise<Usage | null>;
}
