import type { ExpiredDelivery, SignalRecord } from '../records.js';
import type { AgentSignal } from '../../protocol/agent-signal.js';
import type { Ack, AckOutcome, AgentQueueDepth, AgentSessionClaim, Deliveries, SessionHandOut } from '../deliveries.js';
import type { DeliveryListeners } from '../delivery-listeners.js';
import { isoTime } from '../iso-time.js';
import type { SqliteConnection } from './connection.js';
import { expireDueDeliveries } from './expire-deliveries.js';
import { agentSignalOf, deliveryOf, jsonText, type AgentSignalRow, type DeliveryRow } from './sqlite-rows.js';
import type { SqliteWriteGroup } from './write-group.js';

/**
 * A hand-out's first step: the agent's unacknowledged deliveries past their deadline become
 * `expired`. It reads them through `deliveries_agent_due`, so only what is due, however long the
 * agent's queue (through its queue's index it read the whole queue at every hand-out).
 */
export const EXPIRE_AGENT_DUE_SQL = `UPDATE deliveries SET status = 'expired'
  WHERE agent_id = ? AND status IN ('queued', 'delivered') AND expires_at <= ?
  RETURNING signal_id, received_at, expires_at`;

/** Each agent's queue of signals, handed out and acknowledged: the `deliveries` table. */
export class SqliteDeliveries implements Deliveries {
  constructor(
    private readonly connection: SqliteConnection,
    /** Hand-outs and acks are group-committed with the other agent writes of their turn. */
    private readonly writes: SqliteWriteGroup,
    /** This process's watchers of new deliveries. */
    private readonly listeners: DeliveryListeners,
    /** Told, after the commit, of the deliveries a hand-out or the sweep marked expired. */
    private readonly expiryListeners: DeliveryListeners<ExpiredDelivery[]>,
  ) {}

  async countOpen(): Promise<AgentQueueDepth[]> {
    return this.connection
      .stmt(
        `SELECT a.id AS agentId,
           (SELECT count(*) FROM deliveries d WHERE d.agent_id = a.id AND d.status IN ('queued', 'delivered')) AS open
         FROM agents a ORDER BY a.id`,
      )
      .all() as AgentQueueDepth[];
  }

  /**
   * One delivery per routed agent, each at the agent's next queue position (inside the ingest's
   * transaction): `halted` for the agents in `halted`, `queued` for the others, which it answers.
   */
  queueDeliveries(record: SignalRecord, agentIds: string[], expiresAt: string, halted: Set<string>): string[] {
    const bump = this.connection.stmt('UPDATE agents SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq');
    const insert = this.connection.stmt(
      `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, attempts, received_at)
       VALUES (?, ?, ?, ?, ?, 0, ?)`,
    );
    for (const agentId of agentIds) {
      const { last_seq: seq } = bump.get(agentId) as { last_seq: number };
      insert.run(record.id, agentId, seq, halted.has(agentId) ? 'halted' : 'queued', expiresAt, record.receivedAt);
    }
    return halted.size === 0 ? agentIds : agentIds.filter((agentId) => !halted.has(agentId));
  }

  /**
   * Needs no wait for ingests: it writes, so it settles only after its group's sync of the WAL,
   * which also covers any ingest batch it read from; nothing leaves here before it is on disk.
   */
  async take(agentId: string, now: string, limit: number): Promise<AgentSignal[]> {
    return (await this.handOut(agentId, null, now, limit, 0)).signals;
  }

  /**
   * Of the first `limit` pending deliveries by seq, hands out (and counts an attempt for) those
   * after seq `after`: a push session passes the last seq it handed out, so what it already
   * holds is neither rewritten nor answered again. A session passes the digest of the token it
   * was opened with: checked in the hand-out's own transaction, so none gives anything once a
   * rotation or deletion has committed (a poll's request checked its own token).
   */
  private async handOut(
    agentId: string,
    tokenHash: string | null,
    now: string,
    limit: number,
    after: number,
  ): Promise<SessionHandOut> {
    const at = isoTime(now);
    const window = Math.max(0, Math.floor(limit));
    let expired: ExpiredDelivery[] = [];
    const handOut = await this.writes.run((): SessionHandOut => {
      if (
        tokenHash !== null &&
        this.connection.stmt('SELECT 1 FROM agents WHERE id = ? AND token_hash = ?').get(agentId, tokenHash) ===
          undefined
      ) {
        return { signals: [], full: false, revoked: true };
      }
      expired = (
        this.connection.stmt(EXPIRE_AGENT_DUE_SQL).all(agentId, at) as {
          signal_id: string;
          received_at: string;
          expires_at: string;
        }[]
      ).map((row) => ({
        signalId: row.signal_id,
        agentId,
        receivedAt: row.received_at,
        expiresAt: row.expires_at,
        expiredAt: at,
      }));
      // What the session already holds is only counted (from the index), not read again with its
      // signal: an agent that acknowledges behind the pushes would otherwise have its whole
      // window re-read at every hand-out.
      const held =
        after > 0
          ? (this.connection
              .stmt(
                `SELECT count(*) FROM deliveries WHERE agent_id = ? AND status IN ('queued', 'delivered') AND seq <= ?`,
              )
              .pluck()
              .get(agentId, after) as number)
          : 0;
      // CAST keeps the limit's value from the planner: with a bare `LIMIT ?` SQLite prepares the
      // statement again at every run (a third of a hand-out's CPU in the burst's profile).
      const fresh =
        window > held
          ? (this.connection
              .stmt(
                `SELECT d.signal_id, d.seq, d.expires_at, s.source_id, s.received_at, s.normalized, s.risk, s.flatten
                   FROM deliveries d JOIN signals s ON s.id = d.signal_id
                  WHERE d.agent_id = ? AND d.status IN ('queued', 'delivered') AND d.seq > ?
                  ORDER BY d.seq LIMIT CAST(? AS INTEGER)`,
              )
              .all(agentId, after, window - held) as AgentSignalRow[])
          : [];
      const full = window > 0 && held + fresh.length >= window;
      if (fresh.length === 0) return { signals: [], full, revoked: false };
      // The rows are the first pending ones after `after` by seq, so the seq range names exactly them.
      this.connection
        .stmt(
          `UPDATE deliveries SET status = 'delivered', delivered_at = COALESCE(delivered_at, ?), attempts = attempts + 1
            WHERE agent_id = ? AND status IN ('queued', 'delivered') AND seq BETWEEN ? AND ?`,
        )
        .run(at, agentId, fresh[0]!.seq, fresh[fresh.length - 1]!.seq);
      return { signals: fresh.map(agentSignalOf), full, revoked: false };
      // Soon: the hand-outs one notification woke commit together at once, not at the turn's end.
    }, true);
    if (expired.length > 0) this.expiryListeners.notify(expired);
    return handOut;
  }

  /** One process serves a data directory: it keeps its own sessions apart (`AgentSessions`). */
  async claimSession(agentId: string, tokenHash: string): Promise<AgentSessionClaim> {
    let released = false;
    /** The last seq this session handed out: seqs only grow, in commit order. */
    let handedUpTo = 0;
    return {
      takeDeliveries: async (now, limit) => {
        if (released) throw new Error(`the push session of agent ${agentId} is no longer held`);
        const handOut = await this.handOut(agentId, tokenHash, now, limit, handedUpTo);
        const last = handOut.signals[handOut.signals.length - 1];
        if (last) handedUpTo = last.seq;
        return handOut;
      },
      onLost: () => undefined,
      release: async () => {
        released = true;
      },
    };
  }

  /** One process serves a data directory: no session is ever open elsewhere. */
  async sessionOpenElsewhere(): Promise<boolean> {
    return false;
  }

  /** Answers once the acknowledgement is on disk, grouped with the other agent writes of its turn. */
  ack(agentId: string, signalId: string, ack: Ack, now: string): Promise<AckOutcome> {
    // Written before the ack joins its group: one that cannot be written fails alone, at once.
    let at: string;
    let result: string | null;
    let timings: string | null;
    try {
      at = isoTime(now);
      result = jsonText(ack.result);
      timings = jsonText(ack.timings);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.writes.run((): AckOutcome => {
      // The usual ack (of a delivered signal, in time) is one statement; any other reads the row first.
      const taken = this.connection
        .stmt(
          `UPDATE deliveries SET status = ?, acked_at = ?, message = ?, result = ?, acked_after_expiry = 0, timings = ?
            WHERE signal_id = ? AND agent_id = ? AND status = 'delivered' AND expires_at > ? RETURNING *`,
        )
        .get(ack.status, at, ack.message, result, timings, signalId, agentId, at) as DeliveryRow | undefined;
      if (taken) return { kind: 'acked', delivery: deliveryOf(taken) };
      const row = this.connection
        .stmt('SELECT * FROM deliveries WHERE signal_id = ? AND agent_id = ?')
        .get(signalId, agentId) as DeliveryRow | undefined;
      if (!row) return { kind: 'not_found' };
      const delivery = deliveryOf(row);
      if (row.status === 'executed' || row.status === 'rejected' || row.status === 'failed') {
        return { kind: row.status === ack.status ? 'already_acked' : 'conflict', delivery };
      }
      if (row.status === 'expired' && row.delivered_at === null) return { kind: 'expired', delivery };
      // Halted before it was handed out: the agent never had it.
      if (row.status === 'halted') return { kind: 'not_delivered', delivery };
      if (row.status === 'queued') return { kind: row.expires_at <= at ? 'expired' : 'not_delivered', delivery };
      const afterExpiry = row.status === 'expired' || row.expires_at <= at;
      const updated = this.connection
        .stmt(
          `UPDATE deliveries SET status = ?, acked_at = ?, message = ?, result = ?, acked_after_expiry = ?, timings = ?
            WHERE signal_id = ? AND agent_id = ? RETURNING *`,
        )
        .get(ack.status, at, ack.message, result, afterExpiry ? 1 : 0, timings, signalId, agentId) as DeliveryRow;
      return { kind: 'acked', delivery: deliveryOf(updated) };
    });
  }

  watch(listener: (agentIds: string[]) => void): () => void {
    return this.listeners.add(listener);
  }

  announce(agentIds: string[]): void {
    this.listeners.notify(agentIds);
  }

  watchExpiries(listener: (expired: ExpiredDelivery[]) => void): () => void {
    return this.expiryListeners.add(listener);
  }

  async expire(now: string, limit: number): Promise<number> {
    const expired = expireDueDeliveries(this.connection, now, limit);
    if (expired.length > 0) this.expiryListeners.notify(expired);
    return expired.length;
  }
}
