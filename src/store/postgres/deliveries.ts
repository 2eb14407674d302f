import type pg from 'pg';
import type { AgentSignal } from '../../protocol/agent-signal.js';
import type { Ack, AckOutcome, AgentQueueDepth, AgentSessionClaim } from '../store.js';
import { AgentSessionOpenError } from '../agent-session-open.js';
import { isoTime } from '../iso-time.js';
import { deliveryOf, jsonParam, textParam, type DeliveryRow } from './postgres-rows.js';
import type { SessionLocks } from './session-locks.js';
import { sessionLockKeySql, takeDeliveriesOn } from './take-deliveries.js';

/**
 * Each agent's queue of signals, handed out and acknowledged: the `deliveries` table. Queued by
 * `signalgate_ingest`; handed out by `take-deliveries.ts`, to a poll here or to a push session
 * through its lock (`session-locks.ts`).
 */
export class PostgresDeliveries {
  constructor(
    private readonly pool: pg.Pool,
    private readonly sessionLocks: SessionLocks,
    /** The schema the tables are in: part of every session lock's key. */
    private readonly scope: () => string,
  ) {}

  async countOpenDeliveries(): Promise<AgentQueueDepth[]> {
    const { rows } = await this.pool.query<{ agent_id: string; open: string }>(
      `SELECT a.id AS agent_id,
         (SELECT count(*) FROM deliveries d WHERE d.agent_id = a.id AND d.status IN ('queued', 'delivered')) AS open
       FROM agents a ORDER BY a.id`,
    );
    return rows.map((row) => ({ agentId: row.agent_id, open: Number(row.open) }));
  }

  async takeDeliveries(agentId: string, now: string, limit: number): Promise<AgentSignal[]> {
    const signals = await takeDeliveriesOn(this.pool, 'poll', this.scope(), agentId, now, limit);
    if (signals === null) throw new AgentSessionOpenError(agentId);
    return signals;
  }

  claimAgentSession(agentId: string): Promise<AgentSessionClaim | null> {
    return this.sessionLocks.claim(agentId);
  }

  async agentSessionOpenElsewhere(agentId: string): Promise<boolean> {
    // A shared hold taken and given back at once: it fails only beside a session's hold.
    const { rows } = await this.pool.query<{ free: boolean }>(
      `SELECT pg_try_advisory_xact_lock_shared(${sessionLockKeySql('$1', '$2')}) AS free`,
      [agentId, this.scope()],
    );
    return !rows[0]?.free;
  }

  async ackDelivery(agentId: string, signalId: string, ack: Ack, now: string): Promise<AckOutcome> {
    // Conditional update first: of two racing acks exactly one matches; the other classifies below.
    const { rows: updated } = await this.pool.query<DeliveryRow>(
      `UPDATE deliveries SET status = $3, acked_at = $4, message = $5, result = $6,
                             acked_after_expiry = (status = 'expired' OR expires_at <= $4)
        WHERE signal_id = $1 AND agent_id = $2
          AND (status = 'delivered' OR (status = 'expired' AND delivered_at IS NOT NULL))
       RETURNING *`,
      [signalId, agentId, ack.status, isoTime(now), textParam(ack.message), jsonParam(ack.result)],
    );
    if (updated[0]) return { kind: 'acked', delivery: deliveryOf(updated[0]) };
    const { rows } = await this.pool.query<DeliveryRow>(
      'SELECT * FROM deliveries WHERE signal_id = $1 AND agent_id = $2',
      [signalId, agentId],
    );
    const row = rows[0];
    if (!row) return { kind: 'not_found' };
    const delivery = deliveryOf(row);
    if (row.status === 'expired') return { kind: 'expired', delivery };
    if (row.status === 'queued') return { kind: row.expires_at.getTime() <= Date.parse(now) ? 'expired' : 'not_delivered', delivery };
    return { kind: row.status === ack.status ? 'already_acked' : 'conflict', delivery };
  }
}

/** The agents with queued deliveries: what a notification connection catches up on after (re)connecting. */
export async function agentsWithQueuedDeliveries(client: pg.ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ agent_id: string }>(
    "SELECT DISTINCT agent_id FROM deliveries WHERE status = 'queued' ORDER BY agent_id",
  );
  return rows.map((row) => row.agent_id);
}
