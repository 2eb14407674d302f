import type pg from 'pg';
import type { Account } from '../records.js';
import type { AccountPatch, Accounts } from '../accounts.js';
import { recordPage, type PageRequest, type RecordPage } from '../record-page.js';
import { newestFirst } from './newest-first.js';
import { isoTime } from '../iso-time.js';
import { accountOf, type AccountRow } from './postgres-rows.js';

/** Accounts and their monthly quota: the `accounts` table. */
export class PostgresAccounts implements Accounts {
  constructor(private readonly pool: pg.Pool) {}

  async create(account: Account): Promise<void> {
    await this.pool.query('INSERT INTO accounts (id, name, monthly_signal_quota, created_at) VALUES ($1, $2, $3, $4)', [
      account.id,
      account.name,
      account.monthlySignalQuota,
      isoTime(account.createdAt),
    ]);
  }

  async get(id: string): Promise<Account | null> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
    return rows[0] ? accountOf(rows[0]) : null;
  }

  /**
   * One statement. `signalgate_ingest` reads the quota in the statement that charges, so every
   * charge made after this commit holds to the new quota. (A non-key update: it does not wait
   * for ingests holding key-share locks on the account.)
   */
  async update(id: string, patch: AccountPatch): Promise<Account | null> {
    const { rows } = await this.pool.query<AccountRow>(
      `UPDATE accounts SET name = COALESCE($1, name), monthly_signal_quota = COALESCE($2, monthly_signal_quota)
        WHERE id = $3 RETURNING *`,
      [patch.name ?? null, patch.monthlySignalQuota ?? null, id],
    );
    return rows[0] ? accountOf(rows[0]) : null;
  }

  async list(page: PageRequest): Promise<RecordPage<Account>> {
    return recordPage(page, (await newestFirst<AccountRow>(this.pool, 'accounts', page)).map(accountOf));
  }
}
