import type { Account } from './records.js';
import type { PageRequest, RecordPage } from './record-page.js';

/** Accounts and their monthly quota. */
export interface Accounts {
  create(account: Account): Promise<void>;
  get(id: string): Promise<Account | null>;
  /**
   * Applies the patch; null when no such account. A new quota holds for the current period at
   * once: every ingest reads the quota inside its own commit.
   */
  update(id: string, patch: AccountPatch): Promise<Account | null>;
  /** Accounts, newest first, a page at a time (`before`: the last id of the previous page). */
  list(page: PageRequest): Promise<RecordPage<Account>>;
}

export interface AccountPatch {
  name?: string;
  monthlySignalQuota?: number;
}
