import type pg from 'pg';
import type { ExpiredDelivery } from '../records.js';
import type { SessionHandOut } from '../store.js';
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
 * One statement hands out for several agents (`$1`, each with its window `$2`, the last seq it
 * already holds `$5` and, for a session, its token's digest `$6`): in a burst, 200 agents each polling after every ack made thousands of
 * hand-outs, each a statement and a COMMIT of its own. Per agent, as before: `gate` is evaluated
 * once (the `req` CTE is materialised); when it is false nothing of that agent is expired or
 * handed out. The expiring and the handing-out CTEs touch disjoint rows (expires_at on either
 * side of now), so they need not see each other's effects. Of the agent's first `lim` pending
 * deliveries (`picked`), only those after its `after` are handed out: a push session passes the
 * last seq it handed out, so what it holds is not rewritten. Agents are locked in the order
 * given, which callers keep sorted, so two such statements do not deadlock on each other.
 *
 * Neither step may cost more as an agent's queue grows: `expired` reads through
 * `deliveries_agent_due` (only what is due), and `handed` finds its rows by key, told so by the
 * redundant `signal_id = ANY (...)`. Without it the planner, which guesses that `LIMIT req.lim`
 * keeps a tenth of the agent's queue, joined a long queue by reading the whole table.
 */
function handOutSql(gate: string): string {
  return `WITH req AS MATERIALIZED (
       SELECT r.agent_id, r.lim, r.after, ${gate} AS open
         FROM unnest($1::text[], $2::int[], $5::int[], $6::text[]) WITH ORDINALITY AS r (agent_id, lim, after, token_hash, n)
        ORDER BY r.n
     ), expired AS (
       UPDATE deliveries d SET status = 'expired'
         FROM req
        WHERE req.open AND d.agent_id = req.agent_id AND d.status IN ('queued', 'delivered') AND d.expires_at <= $4
       RETURNING d.agent_id, d.signal_id, d.received_at, d.expires_at
     ), picked AS (
       SELECT p.agent_id, p.signal_id, p.seq, req.after
         FROM req CROSS JOIN LATERAL (
           SELECT agent_id, signal_id, seq FROM deliveries
            WHERE agent_id = req.agent_id AND status IN ('queued', 'delivered') AND expires_at > $4 AND req.open
            ORDER BY seq LIMIT req.lim
            FOR UPDATE
         ) p
     ), handed AS (
       UPDATE deliveries d
          SET status = 'delivered', delivered_at = COALESCE(d.delivered_at, $4), attempts = d.attempts + 1
         FROM picked JOIN signals s ON s.id = picked.signal_id
        WHERE d.agent_id = picked.agent_id AND d.signal_id = picked.signal_id AND picked.seq > picked.after
          AND d.signal_id = ANY (ARRAY(SELECT signal_id FROM picked WHERE seq > after))
       RETURNING d.agent_id, d.signal_id, d.seq, d.expires_at, s.source_id, s.received_at, s.normalized, s.risk, s.flatten
     ), counts AS (
       SELECT agent_id, count(*)::int AS picked FROM picked GROUP BY agent_id
     ), lapsed AS (
       SELECT agent_id, json_agg(json_build_object('signal_id', signal_id, 'received_at', received_at, 'expires_at', expires_at)) AS expired
         FROM expired GROUP BY agent_id
     )
     SELECT req.agent_id AS for_agent, req.open, COALESCE(counts.picked, 0) AS picked, lapsed.expired,
            handed.signal_id, handed.seq, handed.expires_at, handed.source_id, handed.received_at, handed.normalized,
            handed.risk, handed.flatten
       FROM req
       LEFT JOIN counts ON counts.agent_id = req.agent_id
       LEFT JOIN lapsed ON lapsed.agent_id = req.agent_id
       LEFT JOIN handed ON handed.agent_id = req.agent_id`;
}

/** A poll's hand-out: refused (null) while a push session of the agent holds its lock anywhere. */
const POLL_SQL = handOutSql(`pg_try_advisory_xact_lock_shared(${sessionLockKeySql('r.agent_id', '$3')})`);
/**
 * Sessions' hand-outs, on the connection that holds the sessions' locks: open while the agent's
 * token is still the one its session was opened with, read in the statement's own snapshot, so
 * a rotation or deletion committed before it starts stops it, with no round trip of its own
 * before it (31-33 ms at the p50 in the burst). The schema, `$3`, is bound for both statements
 * and never null. Exported for the plan test.
 */
export const SESSION_SQL = handOutSql(
  '$3::text IS NOT NULL AND EXISTS (SELECT 1 FROM agents a WHERE a.id = r.agent_id AND a.token_hash = r.token_hash)',
);

type ExpiredJson = { signal_id: string; received_at: string | null; expires_at: string };
type HandOutRow = { for_agent: string; open: boolean; picked: number; expired: ExpiredJson[] | null } & (
  { signal_id: null } | AgentSignalRow
);

/**
 * One agent's part of a hand-out: its window, the last seq it already holds (0 for a poll), and
 * for a session the digest of the token it was opened with (a poll's request checked its own).
 */
export interface HandOutRequest {
  agentId: string;
  limit: number;
  after: number;
  tokenHash: string | null;
}

/** What one hand-out did: the deliveries handed out, by seq, whether the window is full, and those it found expired. */
export interface HandOut extends Omit<SessionHandOut, 'revoked'> {
  expired: ExpiredDelivery[];
}

/**
 * Marks each agent's first `limit` pending deliveries after seq `after` delivered and answers
 * them by seq, with whether the first `limit` pending filled the window; null for an agent,
 * changing nothing of it, when `as` is 'poll' and a push session of the agent is open, or when
 * `as` is 'session' and the agent's token is no longer `tokenHash` (rotated, or deleted). One
 * statement for all (one transaction unless `db` is in one). Each agent appears once; pass
 * them sorted by id (the order their rows are locked in).
 */
export async function takeDeliveriesFor(
  db: pg.Pool | pg.PoolClient | pg.Client,
  as: 'poll' | 'session',
  scope: string,
  requests: readonly HandOutRequest[],
  now: string,
): Promise<Map<string, HandOut | null>> {
  const at = isoTime(now);
  // Unnamed, so planned with each call's own values: a named statement goes generic after five
  // runs, on the statistics of that moment. Prepared while the deliveries table was near empty,
  // the generic plan read the whole table once per agent when a burst had filled it.
  const { rows } = await db.query<HandOutRow>({
    text: as === 'poll' ? POLL_SQL : SESSION_SQL,
    values: [
      requests.map((r) => r.agentId),
      requests.map((r) => Math.max(0, Math.floor(r.limit))),
      scope,
      at,
      requests.map((r) => r.after),
      requests.map((r) => r.tokenHash),
    ],
  });
  const byAgent = new Map<string, HandOutRow[]>();
  for (const row of rows) {
    const list = byAgent.get(row.for_agent);
    if (list) list.push(row);
    else byAgent.set(row.for_agent, [row]);
  }
  const answers = new Map<string, HandOut | null>();
  for (const request of requests) {
    const agentRows = byAgent.get(request.agentId);
    const first = agentRows?.[0];
    if (!agentRows || !first?.open) {
      answers.set(request.agentId, null);
      continue;
    }
    const window = Math.max(0, Math.floor(request.limit));
    answers.set(request.agentId, {
      signals: agentRows
        .filter((row): row is HandOutRow & AgentSignalRow => row.signal_id !== null)
        .sort((a, b) => a.seq - b.seq)
        .map(agentSignalOf),
      full: window > 0 && first.picked >= window,
      expired: (first.expired ?? []).map((row) => ({
        signalId: row.signal_id,
        agentId: request.agentId,
        receivedAt: row.received_at === null ? '' : isoTime(row.received_at),
        expiresAt: isoTime(row.expires_at),
        expiredAt: at,
      })),
    });
  }
  return answers;
}
