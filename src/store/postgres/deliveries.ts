import type pg from 'pg';
import type { ExpiredDelivery } from '../records.js';
import type { AgentSignal } from '../../protocol/agent-signal.js';
import type { Ack, AckOutcome, AgentQueueDepth, AgentSessionClaim, Deliveries } from '../deliveries.js';
import type { DeliveryListeners } from '../delivery-listeners.js';
import { AgentSessionOpenError } from '../agent-session-open.js';
import { DeliveryChannel } from './delivery-channel.js';
import { expireDueDeliveries } from './expire-deliveries.js';
import { deliveryOf, type DeliveryRow } from './postgres-rows.js';
import { GroupedAcks } from './grouped-acks.js';
import type { SessionLocks } from './session-locks.js';
import type { ItemResult } from '../item-result.js';
import { Batches } from './batches.js';
import { againIfRolledBack } from './transaction.js';
import { type HandOut, sessionLockKeySql, takeDeliveriesFor } from './take-deliveries.js';

interface PollTake {
  agentId: string;
  now: string;
  limit: number;
}

/** At most this many agents' polls in one hand-out statement. */
const MAX_POLL_BATCH = 200;
/**
 * Hand-out statements in flight at once. One at a time, the polls of a burst queued behind the
 * statement under way, and behind its wait for a lock an ack group held; two batches never hold
 * the same agent (`keyOf`), and each locks its agents in id order as the ack groups do, so they
 * take no lock from each other.
 */
const MAX_POLL_BATCHES_IN_FLIGHT = 2;

/**
 * Each agent's queue of signals, handed out and acknowledged: the `deliveries` table. Queued by
 * `signalgate_ingest`; handed out by `take-deliveries.ts`, to a poll here or to a push session
 * through its lock (`session-locks.ts`).
 */
export class PostgresDeliveries implements Deliveries {
  private readonly acks: GroupedAcks;
  /**
   * The polls' hand-outs of one event-loop turn in one statement (one COMMIT), up to
   * `MAX_POLL_BATCHES_IN_FLIGHT` batches in flight; a second poll of an agent already in flight
   * waits for the next batch.
   */
  private readonly pollTakes: Batches<PollTake, HandOut | null>;
  /** Other instances' notifications of new deliveries, heard from the first watcher on. */
  private channel: DeliveryChannel | null = null;

  constructor(
    /** The delivery pool: what the agents cause runs on connections of its own. */
    private readonly pool: pg.Pool,
    private readonly sessionLocks: SessionLocks,
    private readonly setting: {
      /** The main pool, where the expiry sweep (the server's, not an agent's) runs. */
      sweepPool: pg.Pool;
      /** How the notification connection connects. */
      client: pg.ClientConfig;
      /** The schema the tables are in: part of every session lock's key and of the notifications. */
      scope: () => string;
      /** Tells this instance's notifications from other instances'. */
      instance: string;
      isClosed: () => boolean;
      /** This process's watchers of new deliveries. */
      listeners: DeliveryListeners;
      /** Told, after the commit, of the deliveries a poll's hand-out or the sweep marked expired. */
      expiryListeners: DeliveryListeners<ExpiredDelivery[]>;
    },
  ) {
    this.acks = new GroupedAcks(pool);
    this.pollTakes = new Batches((takes) => this.handOutToPolls(takes), {
      maxBatch: MAX_POLL_BATCH,
      maxInFlight: MAX_POLL_BATCHES_IN_FLIGHT,
      keyOf: (take) => take.agentId,
    });
  }

  async countOpen(): Promise<AgentQueueDepth[]> {
    const { rows } = await this.pool.query<{ agent_id: string; open: string }>(
      `SELECT a.id AS agent_id,
         (SELECT count(*) FROM deliveries d WHERE d.agent_id = a.id AND d.status IN ('queued', 'delivered')) AS open
       FROM agents a ORDER BY a.id`,
    );
    return rows.map((row) => ({ agentId: row.agent_id, open: Number(row.open) }));
  }

  async take(agentId: string, now: string, limit: number): Promise<AgentSignal[]> {
    const handOut = await this.pollTakes.submit({ agentId, now, limit });
    if (handOut === null) throw new AgentSessionOpenError(agentId);
    return handOut.signals;
  }

  /**
   * One statement for the batch's agents, sorted by id (the order their rows are locked in), at
   * the latest of their times. Two polls of one agent in the batch (a token shared by two
   * processes) share one hand-out, as two polls one after the other would both get the same
   * unacknowledged signals. A deadlock rolled the statement back, so it is run again.
   */
  private async handOutToPolls(takes: PollTake[]): Promise<ItemResult<HandOut | null>[]> {
    const limits = new Map<string, number>();
    let now = takes[0]!.now;
    for (const take of takes) {
      limits.set(take.agentId, Math.max(limits.get(take.agentId) ?? 0, take.limit));
      if (Date.parse(take.now) > Date.parse(now)) now = take.now;
    }
    const requests = [...limits.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([agentId, limit]) => ({ agentId, limit, after: 0, tokenHash: null }));
    const handOuts = await againIfRolledBack(() =>
      takeDeliveriesFor(this.pool, 'poll', this.setting.scope(), requests, now),
    );
    const expired = [...handOuts.values()].flatMap((handOut) => handOut?.expired ?? []);
    if (expired.length > 0) this.setting.expiryListeners.notify(expired);
    return takes.map((take) => ({ ok: true, value: handOuts.get(take.agentId) ?? null }));
  }

  claimSession(agentId: string, tokenHash: string): Promise<AgentSessionClaim | null> {
    return this.sessionLocks.claim(agentId, tokenHash);
  }

  async sessionOpenElsewhere(agentId: string): Promise<boolean> {
    // A shared hold taken and given back at once: it fails only beside a session's hold.
    const { rows } = await this.pool.query<{ free: boolean }>(
      `SELECT pg_try_advisory_xact_lock_shared(${sessionLockKeySql('$1', '$2')}) AS free`,
      [agentId, this.setting.scope()],
    );
    return !rows[0]?.free;
  }

  async ack(agentId: string, signalId: string, ack: Ack, now: string): Promise<AckOutcome> {
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
    // Halted before it was handed out: the agent never had it.
    if (row.status === 'halted') return { kind: 'not_delivered', delivery };
    if (row.status === 'queued')
      return { kind: row.expires_at.getTime() <= Date.parse(now) ? 'expired' : 'not_delivered', delivery };
    return { kind: row.status === ack.status ? 'already_acked' : 'conflict', delivery };
  }

  /** Listens, from the first watcher on, for other instances' notifications of new deliveries. */
  watch(listener: (agentIds: string[]) => void): () => void {
    const unwatch = this.setting.listeners.add(listener);
    if (!this.channel && !this.setting.isClosed()) {
      this.channel = new DeliveryChannel({
        client: { ...this.setting.client, application_name: `signalgate-listen ${this.setting.scope()}`.slice(0, 63) },
        scope: this.setting.scope,
        instance: this.setting.instance,
        onAgents: (agentIds) => this.setting.listeners.notify(agentIds),
        catchUp: agentsWithQueuedDeliveries,
      });
    }
    return unwatch;
  }

  /** Resolves once notifications from other instances can arrive (after `watch`). */
  async listening(): Promise<void> {
    await this.channel?.listening();
  }

  /** How many times the notification connection has (re)connected. */
  get listenConnections(): number {
    return this.channel?.listenConnections ?? 0;
  }

  /** Stops hearing other instances (for closing). */
  async stopListening(): Promise<void> {
    await this.channel?.stop();
    this.channel = null;
  }

  announce(agentIds: string[]): void {
    this.setting.listeners.notify(agentIds);
  }

  watchExpiries(listener: (expired: ExpiredDelivery[]) => void): () => void {
    return this.setting.expiryListeners.add(listener);
  }

  async expire(now: string, limit: number): Promise<number> {
    const expired = await expireDueDeliveries(this.setting.sweepPool, now, limit);
    if (expired.length > 0) this.setting.expiryListeners.notify(expired);
    return expired.length;
  }
}

/** The agents with queued deliveries: what a notification connection catches up on after (re)connecting. */
export async function agentsWithQueuedDeliveries(client: pg.ClientBase): Promise<string[]> {
  const { rows } = await client.query<{ agent_id: string }>(
    "SELECT DISTINCT agent_id FROM deliveries WHERE status = 'queued' ORDER BY agent_id",
  );
  return rows.map((row) => row.agent_id);
}
