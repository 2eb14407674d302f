import type { Account } from '../records.js';
import type { AccountPatch, Accounts } from '../accounts.js';
import { recordPage, type PageRequest, type RecordPage } from '../record-page.js';
import { newestFirst } from './newest-first.js';
import { isoTime } from '../iso-time.js';
import type { SqliteConnection } from './connection.js';
import { accountOf, type AccountRow } from './sqlite-rows.js';

/** Accounts and their monthly quota: the `accounts` table. */
export class SqliteAccounts implements Accounts {
  constructor(private readonly connection: SqliteConnection) {}

  async create(account: Account): Promise<void> {
    this.connection
      .stmt('INSERT INTO accounts (id, name, monthly_signal_quota, created_at) VALUES (?, ?, ?, ?)')
      .run(account.id, account.name, account.monthlySignalQuota, isoTime(account.createdAt));
  }

  async get(id: string): Promise<Account | null> {
    const row = this.connection.stmt('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
    return row ? accountOf(row) : null;
  }

  /** One statement: the inbound thread's next batch reads the new quota inside its own transaction. */
  async update(id: string, patch: AccountPatch): Promise<Account | null> {
    const row = this.connection
      .stmt(
        `UPDATE accounts SET name = COALESCE(?, name), monthly_signal_quota = COALESCE(?, monthly_signal_quota)
          WHERE id = ? RETURNING *`,
      )
      .get(patch.name ?? null, patch.monthlySignalQuota ?? null, id) as AccountRow | undefined;
    return row ? accountOf(row) : null;
  }

  async list(page: PageRequest): Promise<RecordPage<Account>> {
    return recordPage(page, newestFirst<AccountRow>(this.connection, 'accounts', page).map(accountOf));
  }
}
