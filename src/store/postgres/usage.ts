import type pg from 'pg';
import type { QuotaUsage } from '../quota-usage.js';
import type { Usage } from '../records.js';

/**
 * What accounts used of their quota: the `usage` table. Charged by `signalgate_ingest`
 * (migrations/postgres/functions.sql).
 */
export class PostgresUsage implements QuotaUsage {
  constructor(private readonly pool: pg.Pool) {}

  async get(accountId: string, period: string): Promise<Usage | null> {
    const { rows } = await this.pool.query<{ quota: number; used: number }>(
      `SELECT a.monthly_signal_quota AS quota, COALESCE(u.used, 0) AS used
         FROM accounts a LEFT JOIN usage u ON u.account_id = a.id AND u.period = $1
        WHERE a.id = $2`,
      [period, accountId],
    );
    return rows[0] ? { period, used: rows[0].used, limit: rows[0].quota } : null;
  }
}
