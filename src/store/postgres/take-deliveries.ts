import type pg from 'pg';
import type { AgentSignal } from '../../protocol/agent-signal.js';
import { isoTime } from '../iso-time.js';
import { agentSignalOf, type AgentSignalRow } from './postgres-rows.js';

/**
 * The advisory-lock key of an agent's push session: database-wide, so the schema is part of it.
 * A WebSocket session holds it exclusively for its life (`session-locks.ts`); a poll's hand-out
 * holds it shared for its one statement, so the two never hand out at the same time.
 */
export function sessionLockKeySql(agentIdParam: string, scopeParam: string): string {
  return `hashtextextended('signalgate.session' || chr(10) || ${scopeParam}::text || chr(10) || ${agentIdParam}::text, 0)`;
}

/**
 * One statement: the expiring and the handing-out CTEs touch disjoint rows (expires_at on either
 * side of now), so they need not see each other's effects. `gate` is evaluated once (a volatile
 * CTE used more than once is materialised); when it is false nothing is expired or handed out.
 */
function handOutSql(gate: string): string {
  return `WITH gate AS (SELECT ${gate} AS open), expired AS (
       UPDATE deliveries SET status = 'expired'
        WHERE agent_id = $1 AND status IN ('queued', 'delivered') AND expires_at <= $2 AND (SELECT open FROM gate)
     ), picked AS (
       SELECT signal_id FROM deliveries
        WHERE agent_id = $1 AND status IN ('queued', 'delivered') AND expires_at > $2 AND (SELECT open FROM gate)
        ORDER BY seq LIMIT $3
        FOR UPDATE
     ), handed AS (
       UPDATE deliveries d
          SET status = 'delivered', delivered_at = COALESCE(d.delivered_at, $2), attempts = d.attempts + 1
         FROM picked JOIN signals s ON s.id = picked.signal_id
        WHERE d.agent_id = $1 AND d.signal_id = picked.signal_id
       RETURNING d.signal_id, d.seq, d.expires_at, s.source_id, s.received_at, s.normalized
     )
     SELECT gate.open, handed.* FROM gate LEFT JOIN handed ON true`;
}

/** A poll's hand-out: refused (null) while a push session of the agent holds its lock anywhere. */
const POLL_SQL = handOutSql(`pg_try_advisory_xact_lock_shared(${sessionLockKeySql('$1', '$4')})`);
/**
 * A session's hand-out, on the connection that holds the session's lock: its gate is always
 * open (the schema, `$4`, is bound for both statements and never null).
 */
const SESSION_SQL = handOutSql('$4::text IS NOT NULL');

type HandOutRow = { open: boolean } & ({ signal_id: null } | AgentSignalRow);

/**
 * Marks the agent's first `limit` pending deliveries delivered and answers them by seq; null,
 * changing nothing, when `as` is 'poll' and a push session of the agent is open.
 */
export async function takeDeliveriesOn(
  db: pg.Pool | pg.PoolClient | pg.Client,
  as: 'poll' | 'session',
  scope: string,
  agentId: string,
  now: string,
  limit: number,
): Promise<AgentSignal[] | null> {
  const { rows } = await db.query<HandOutRow>(as === 'poll' ? POLL_SQL : SESSION_SQL, [
    agentId,
    isoTime(now),
    Math.max(0, Math.floor(limit)),
    scope,
  ]);
  if (!rows[0]?.open) return null;
  return rows
    .filter((row): row is { open: boolean } & AgentSignalRow => row.signal_id !== null)
    .sort((a, b) => a.seq - b.seq)
    .map(agentSignalOf);
}
