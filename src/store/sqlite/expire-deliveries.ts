import type { ExpiredDelivery } from '../records.js';
import { isoTime } from '../iso-time.js';
import type { SqliteConnection } from './connection.js';

/**
 * The expiry sweep on SQLite: marks queued deliveries past their deadline `expired`, oldest
 * deadline first, at most `limit`. Only `queued` ones: a delivery already handed out is its
 * agent's, which may still acknowledge it. One process serves the file and this runs on its
 * connection, so no hand-out can interleave. The write lock is taken only when something is due.
 */
export function expireDueDeliveries(connection: SqliteConnection, now: string, limit: number): ExpiredDelivery[] {
  const at = isoTime(now);
  const window = Math.max(0, Math.floor(limit));
  if (window === 0) return [];
  const due = connection.stmt("SELECT 1 FROM deliveries WHERE status = 'queued' AND expires_at <= ? LIMIT 1").get(at);
  if (due === undefined) return [];
  const rows = connection.db
    .transaction(
      () =>
        connection
          // LIMIT CAST(? AS INTEGER), not `LIMIT ?`: see the hand-out in deliveries.ts.
          .stmt(
            `UPDATE deliveries SET status = 'expired'
              WHERE status = 'queued' AND (signal_id, agent_id) IN (
                SELECT signal_id, agent_id FROM deliveries
                 WHERE status = 'queued' AND expires_at <= ? ORDER BY expires_at LIMIT CAST(? AS INTEGER))
             RETURNING signal_id, agent_id, received_at, expires_at`,
          )
          .all(at, window) as { signal_id: string; agent_id: string; received_at: string | null; expires_at: string }[],
    )
    .immediate();
  return rows.map((row) => ({
    signalId: row.signal_id,
    agentId: row.agent_id,
    receivedAt: row.received_at ?? '',
    expiresAt: row.expires_at,
    expiredAt: at,
  }));
}
