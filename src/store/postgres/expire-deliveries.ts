import type pg from 'pg';
import type { ExpiredDelivery } from '../records.js';
import { isoTime } from '../iso-time.js';

/**
 * The expiry sweep on PostgreSQL: marks queued deliveries past their deadline `expired`, oldest
 * deadline first, at most `limit`, in one statement. Several instances may sweep at once: rows
 * another sweep or a hand-out holds are skipped (`SKIP LOCKED`), and a row a hand-out changed
 * since this statement's snapshot is re-checked under its lock and left out (it is no longer
 * `queued`). So each delivery is expired, and reported, by exactly one instance, and never
 * one its agent was handed: the agent may still acknowledge that.
 */
export async function expireDueDeliveries(pool: pg.Pool, now: string, limit: number): Promise<ExpiredDelivery[]> {
  const at = isoTime(now);
  const window = Math.max(0, Math.floor(limit));
  if (window === 0) return [];
  const { rows } = await pool.query<{
    signal_id: string;
    agent_id: string;
    received_at: Date | null;
    expires_at: Date;
  }>(
    `WITH due AS (
       SELECT signal_id, agent_id FROM deliveries
        WHERE status = 'queued' AND expires_at <= $1
        ORDER BY expires_at LIMIT $2
        FOR UPDATE SKIP LOCKED
     )
     UPDATE deliveries d SET status = 'expired'
       FROM due WHERE d.signal_id = due.signal_id AND d.agent_id = due.agent_id AND d.status = 'queued'
     RETURNING d.signal_id, d.agent_id, d.received_at, d.expires_at`,
    [at, window],
  );
  return rows.map((row) => ({
    signalId: row.signal_id,
    agentId: row.agent_id,
    receivedAt: row.received_at === null ? '' : isoTime(row.received_at),
    expiresAt: isoTime(row.expires_at),
    expiredAt: at,
  }));
}
