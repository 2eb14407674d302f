import type pg from 'pg';
import { isoTime } from '../iso-time.js';
import type { Retention } from '../retention.js';

/**
 * Retention on PostgreSQL: deletes old signal records with their deliveries, and old
 * idempotency keys, a small batch per statement. Rows another instance is pruning are skipped
 * (`SKIP LOCKED`), so several instances may prune at once without waiting on each other.
 */
export class PostgresRetention implements Retention {
  constructor(private readonly pool: pg.Pool) {}

  async pruneSignals(before: string, limit: number): Promise<number> {
    // A delivery still queued or delivered, or a key that still answers replays, keeps its
    // signal. Rows are locked before the checks are trusted: an ack or an ingest that holds
    // one makes the batch skip it this time.
    const { rowCount } = await this.pool.query(
      `WITH doomed AS (
         SELECT s.id FROM signals s
          WHERE s.received_at < $1
            AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.signal_id = s.id AND d.status IN ('queued', 'delivered'))
            AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.signal_id = s.id)
          ORDER BY s.received_at, s.id LIMIT $2
          FOR UPDATE SKIP LOCKED
       ), gone AS (
         DELETE FROM deliveries d USING doomed WHERE d.signal_id = doomed.id
       )
       DELETE FROM signals s USING doomed WHERE s.id = doomed.id`,
      [isoTime(before), Math.max(0, Math.floor(limit))],
    );
    return rowCount ?? 0;
  }

  async pruneIdempotencyKeys(before: string, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM idempotency_keys WHERE ctid IN (
         SELECT ctid FROM idempotency_keys WHERE created_at < $1 ORDER BY created_at LIMIT $2 FOR UPDATE SKIP LOCKED)`,
      [isoTime(before), Math.max(0, Math.floor(limit))],
    );
    return rowCount ?? 0;
  }
}
