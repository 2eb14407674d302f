import type { QuotaUsage } from '../quota-usage.js';
import type { Usage } from '../records.js';
import type { SqliteConnection } from './connection.js';
import { QUOTA_AND_USE_SQL } from './ingest-batch.js';

/**
 * What accounts used of their quota: the `usage` table. Charged by the ingest batch
 * (`ingest-batch.ts`), which shares the reading statement.
 */
export class SqliteUsage implements QuotaUsage {
  constructor(
    private readonly connection: SqliteConnection,
    /** Resolves when no committed ingest is still waiting for the disk. */
    private readonly whenDurable: () => Promise<void>,
  ) {}

  async get(accountId: string, period: string): Promise<Usage | null> {
    await this.whenDurable();
    const row = this.connection.stmt(QUOTA_AND_USE_SQL).get(period, accountId) as
      { quota: number; used: number } | undefined;
    return row ? { period, used: row.used, limit: row.quota } : null;
  }
}
