import { isoTime } from '../iso-time.js';
import type { Retention } from '../retention.js';
import type { SqliteConnection } from './connection.js';

/**
 * Retention on SQLite: deletes old signal records with their deliveries, and old idempotency
 * keys, a small batch per transaction, so the inbound thread waits at most one batch for the
 * write lock.
 */
export class SqliteRetention implements Retention {
  constructor(private readonly connection: SqliteConnection) {}

  async pruneSignals(before: string, limit: number): Promise<number> {
    const cutoff = isoTime(before);
    return this.connection.db
      .transaction((): number => {
        // Oldest first by the log's index; a delivery still queued or delivered, or a key that
        // still answers replays, keeps its signal.
        const ids = (
          this.connection
            // LIMIT CAST(? AS INTEGER), not `LIMIT ?`: see the hand-out in deliveries.ts.
            .stmt(
              `SELECT s.id FROM signals s
                WHERE s.received_at < ?
                  AND NOT EXISTS (SELECT 1 FROM deliveries d WHERE d.signal_id = s.id AND d.status IN ('queued', 'delivered'))
                  AND NOT EXISTS (SELECT 1 FROM idempotency_keys k WHERE k.signal_id = s.id)
                ORDER BY s.received_at, s.id LIMIT CAST(? AS INTEGER)`,
            )
            .all(cutoff, Math.max(0, Math.floor(limit))) as Array<{ id: string }>
        ).map((row) => row.id);
        if (ids.length === 0) return 0;
        const list = JSON.stringify(ids);
        this.connection.stmt('DELETE FROM deliveries WHERE signal_id IN (SELECT value FROM json_each(?))').run(list);
        this.connection.stmt('DELETE FROM signals WHERE id IN (SELECT value FROM json_each(?))').run(list);
        return ids.length;
      })
      .immediate();
  }

  async pruneIdempotencyKeys(before: string, limit: number): Promise<number> {
    return this.connection
      .stmt(
        `DELETE FROM idempotency_keys WHERE (source_id, key) IN (
           SELECT source_id, key FROM idempotency_keys WHERE created_at < ? ORDER BY created_at LIMIT CAST(? AS INTEGER))`,
      )
      .run(isoTime(before), Math.max(0, Math.floor(limit))).changes;
  }
}
