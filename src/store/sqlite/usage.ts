import type { QuotaUsage } from '../quota-usage.js';
import type { Usage } from '../records.js';
import type { SqliteConnection } from './connection.js';
import type { DurableReads } from './durable-reads.js';
import { QUOTA_AND_USE_SQL } from './ingest-batch.js';

/**
 * What accounts used of their quota: the `usage` table. Charged by the ingest batch
 * (`ingest-batch.ts`), which shares the reading statement.
 */
export class SqliteUsage implements QuotaUsage {
  constructor(
    private readonly connection: SqliteConnection,
    /** The ingest charges usage: what is read is answered once it is on disk. */
    private readonly reads: DurableReads,
  ) {}

  async get(accountId: string, period: string): Promise<Usage | null> {
    const row = (await this.reads.read(() => this.connection.stmt(QUOTA_AND_USE_SQL).get(period, accountId))) as
      { quota: number; used: number } | undefined;
    return row ? { period, used: row.used, limit: row.quota } : null;
  }
}
