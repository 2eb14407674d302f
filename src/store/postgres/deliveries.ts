import type pg from 'pg';
import type { ExpiredDelivery } from '../records.js';
import type { AgentSignal } from '../../protocol/agent-signal.js';
import type { Ack, AckOutcome, AgentQueueDepth, AgentSessionClaim } from '../store.js';
import { AgentSessionOpenError } from '../agent-session-open.js';
import { deliveryOf, type DeliveryRow } from './postgres-rows.js';
import { GroupedAcks } from './grouped-acks.js';
import type { SessionLocks } from './session-locks.js';
import { sessionLockKeySql, takeDeliveriesOn } from './take-deliveries.js';

/**
 * Each agent's queue of signals, handed out and acknowledged: the `deliveries` table. Queued by
 * `signalgate_ingest`; handed out by `take-deliveries.ts`, to a poll here or to a push session
 * through its lock (`session-locks.ts`).
 */
export class PostgresDeliveries {
  private readonly acks: GroupedAcks;

  constructor(
    private readonly pool: pg.Pool,
    private readonly sessionLocks: SessionLocks,
    /** The schema the tables are in: part of every session lock's key. */
    private readonly scope: () => string,
    /** Told, after the commit, of the deliveries a poll's hand-out marked expired. */
    private readonly onExpired: (expired: ExpiredDelivery[]) => void,
  ) {
    this.acks = new GroupedAcks(pool);
  }

  async countOpenDeliveries(): Promise<AgentQueueDepth[]> {
    const { rows } = await this.pool.query<{ agent_id: string; open: string }>(
      `SELECT a.id AS agent_id,
         (SELECT count(*) FROM deliveries d WHERE d.agent_id = a.id AND d.status IN ('queued', 'delivered')) AS open
       FROM agents a ORDER BY a.id`,
    );
    return rows.map((row) => ({ agentId: row.agent_id, open: Number(row.open) }));
  }

  async takeDeliveries(agentId: string, now: string, limit: number): Promise<AgentSignal[]> {
    const handOut = await takeDeliveriesOn(this.pool, 'poll', this.scope(), agentId, now, limit);
    if (handOut === null) throw new AgentSessionOpenError(agentId);
    if (handOut.expired.length > 0) this.onExpired(handOut.expired);
    return handOut.signals;
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
    // Conditional update first (grouped with the other acks of this turn): of two racing acks
    // exactly one matches; the other classifies below.
    const updated = await this.acks.apply(agentId, signalId, ack, now);
    if (updated) return { kind: 'acked', delivery: deliveryOf(updated) };
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
