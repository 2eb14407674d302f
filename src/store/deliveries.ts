import type { AgentSignal } from '../protocol/agent-signal.js';
import type { AckStatus, AckTimings, Delivery } from '../protocol/delivery.js';
import type { ExpiredDelivery } from './records.js';

/** Each agent's queue of signals: handed out, acknowledged, expired, and the notices of new ones. */
export interface Deliveries {
  /**
   * Every agent with how many of its deliveries are not yet final (`queued`, or `delivered`
   * and not acknowledged), agents with none included: the metrics' queue depth.
   */
  countOpen(): Promise<AgentQueueDepth[]>;
  /**
   * The agent's unacknowledged deliveries, oldest (lowest seq) first, at most `limit`.
   * Unacknowledged deliveries whose `expiresAt` is at or before `now` are marked `expired`
   * and left out (a late market order is worse than none); the rest are marked `delivered`
   * (deliveredAt set the first time, attempts + 1) and answered. This is a poll's hand-out:
   * while a WebSocket session of the agent is open in another process on the same database, it
   * takes nothing and throws `AgentSessionOpenError` (a session hands out through its claim).
   */
  take(agentId: string, now: string, limit: number): Promise<AgentSignal[]>;
  /**
   * Calls `listener` with the deliveries a hand-out of this process marked expired, after its
   * commit (so the operator hears of every signal that went unexecuted for being late).
   * Answers a function that stops the calls.
   */
  watchExpiries(listener: (expired: ExpiredDelivery[]) => void): () => void;
  /**
   * The expiry sweep: marks at most `limit` queued deliveries whose `expiresAt` is at or before
   * `now` expired, oldest deadline first, and tells the expiry watchers of them after the commit;
   * answers how many. A delivery already handed out is left to its agent (it may still
   * acknowledge it). Several processes may sweep one database at once: each delivery is expired,
   * and reported, by exactly one of them.
   */
  expire(now: string, limit: number): Promise<number>;
  /**
   * Claims the agent's WebSocket push session for this process, against every other process on
   * the same database; null while another holds it. A store that one process serves (SQLite)
   * always grants it: that process keeps its own sessions apart. `tokenHash` is the digest of
   * the token the session was opened with: its hand-outs check it (`SessionHandOut.revoked`).
   */
  claimSession(agentId: string, tokenHash: string): Promise<AgentSessionClaim | null>;
  /** Whether another process on the same database holds the agent's push session (SQLite: never). */
  sessionOpenElsewhere(agentId: string): Promise<boolean>;
  ack(agentId: string, signalId: string, ack: Ack, now: string): Promise<AckOutcome>;
  /**
   * Calls `listener` with the ids of agents that have new deliveries, after the commit that
   * queued them, from this process or (PostgreSQL) any process on the same database.
   * Answers a function that stops the notifications.
   */
  watch(listener: (agentIds: string[]) => void): () => void;
  /**
   * Tells this store's watchers of deliveries another connection of the same process committed
   * (the embedded store's inbound thread), maybe before their sync: a hand-out syncs for itself.
   */
  announce(agentIds: string[]): void;
}

export interface AgentQueueDepth {
  agentId: string;
  open: number;
}

export interface Ack {
  status: AckStatus;
  message: string | null;
  result: unknown;
  /** Kept with the outcome; null when the agent sent none (an older agent). */
  timings?: AckTimings | null;
}

/** A process's hold on an agent's push session: hand-outs go through it while it lasts. */
export interface AgentSessionClaim {
  /**
   * Hands out, in seq order, the agent's pending deliveries this session has not handed out
   * yet, as far as they fit among the first `limit` pending ones (the session's window): one
   * taken again without an ack is neither answered nor rewritten, so `attempts` counts real
   * hand-outs. Hands out nothing, and answers `revoked`, once the agent's token is no longer the
   * one the session was claimed with (rotated, or the agent deleted): the check is part of the
   * hand-out, so no hand-out that starts after the rotation's commit gives anything. Fails once
   * the claim is lost or released, also when released while the hand-out waited for its turn
   * (then nothing is handed out).
   */
  takeDeliveries(now: string, limit: number): Promise<SessionHandOut>;
  /** Calls `listener` once if the claim is lost (its connection to the database broke). */
  onLost(listener: () => void): void;
  /** Gives the session up; safe to call more than once. */
  release(): Promise<void>;
}

export interface SessionHandOut {
  /** Handed out now, by seq. */
  signals: AgentSignal[];
  /** The window is full: the first `limit` pending deliveries are all out, so only an ack lets more through. */
  full: boolean;
  /** The agent's token was rotated or the agent deleted: nothing was handed out, and the session must close. */
  revoked: boolean;
}

export type AckOutcome =
  | { kind: 'acked'; delivery: Delivery }
  /** Acked before with the same status: answered again, changes nothing. */
  | { kind: 'already_acked'; delivery: Delivery }
  /** Acked before with another status. */
  | { kind: 'conflict'; delivery: Delivery }
  /**
   * Expired before it was ever handed out. (A delivery handed out and then expired still takes
   * the ack: the agent may have executed it, and the log must say so.)
   */
  | { kind: 'expired'; delivery: Delivery }
  /**
   * Still queued: never handed to the agent, so it cannot have acted on it. Taking the ack
   * would settle a signal no one executed and it would never be delivered.
   */
  | { kind: 'not_delivered'; delivery: Delivery }
  | { kind: 'not_found' };
