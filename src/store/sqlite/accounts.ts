import type { Account } from '../records.js';
import type { AccountPatch, PageRequest, RecordPage } from '../store.js';
import { recordPage } from '../record-page.js';
import { newestFirst } from './newest-first.js';
import { isoTime } from '../iso-time.js';
import type { SqliteConnection } from './connection.js';
import { accountOf, type AccountRow } from './sqlite-rows.js';

/** Accounts and their monthly quota: the `accounts` table. */
export class SqliteAccounts {
  constructor(private readonly connection: SqliteConnection) {}

  createAccount(account: Account): void {
    this.connection
      .stmt('INSERT INTO accounts (id, name, monthly_signal_quota, created_at) VALUES (?, ?, ?, ?)')
      .run(account.id, account.name, account.monthlySignalQuota, isoTime(account.createdAt));
  }

  getAccount(id: string): Account | null {
    const row = this.connection.stmt('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
    return row ? accountOf(row) : null;
  }

  /** One statement: the inbound thread's next batch reads the new quota inside its own transaction. */
  updateAccount(id: string, patch: AccountPatch): Account | null {
    const row = this.connection
      .stmt(
        `UPDATE accounts SET name = COALESCE(?, name), monthly_signal_quota = COALESCE(?, monthly_signal_quota)
          WHERE id = ? RETURNING *`,
      )
      .get(patch.name ?? null, patch.monthlySignalQuota ?? null, id) as AccountRow | undefined;
    return row ? accountOf(row) : null;
  }

  listAccounts(page: PageRequest): RecordPage<Account> {
    return recordPage(page, newestFirst<AccountRow>(this.connection, 'accounts', page).map(accountOf));
  }
}
