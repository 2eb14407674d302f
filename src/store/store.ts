import type { Problem } from '../errors/catalog.js';
import type { NormalizedSignal } from '../language/index.js';
import type { Account, Agent, AgentIdentity, DashboardSession, ExpiredDelivery, SignalRecord, SignalStatus, SignalWithDeliveries, Source, Usage } from './records.js';
import type { AgentEntry } from './agent-entry.js';
import type { LogEntry } from './log-entry.js';
import type { AgentSignal } from '../protocol/agent-signal.js';
import type { AckStatus, Delivery, DeliveryStatus } from '../protocol/delivery.js';

/**
 * The one storage interface. The embedded SQLite store (default) and the PostgreSQL store
 * implement it; HTTP, delivery and CLI code only ever see this type.
 *
 * Every method that changes state resolves only after the change is committed durably, so
 * an answer built from its result never acknowledges something a crash could lose.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';

  /** Applies the numbered migrations not yet applied. Safe when several processes start at once. */
  migrate(): Promise<void>;
  close(): Promise<void>;

  // Settings (e.g. the generated admin token's hash).
  /** Stores `value` under `name` unless a value is already there; answers the value in force. */
  claimSetting(name: string, value: string): Promise<string>;
  getSetting(name: string): Promise<string | null>;
  /** Stores `value` under `name`, replacing any value there (e.g. the public URL the server renders). */
  setSetting(name: string, value: string): Promise<void>;
  /** Removes the setting `name`, if there is one (e.g. a generated admin token's digest, once the operator set one). */
  deleteSetting(name: string): Promise<void>;

  // Accounts and usage.
  createAccount(account: Account): Promise<void>;
  getAccount(id: string): Promise<Account | null>;
  /**
   * Applies the patch; null when no such account. A new quota holds for the current period at
   * once: every ingest reads the quota inside its own commit.
   */
  updateAccount(id: string, patch: AccountPatch): Promise<Account | null>;
  /** Usage of the account in `period` (`YYYY-MM`); `used` is 0 when nothing was charged yet. Null when no such account. */
  getUsage(accountId: string, period: string): Promise<Usage | null>;
  /** Accounts, newest first, a page at a time (`before`: the last id of the previous page). */
  listAccounts(page: PageRequest): Promise<RecordPage<Account>>;
  /**
   * How many signals the account's log holds per UTC day from `fromDay` to `toDay`
   * (`YYYY-MM-DD`, both included), accepted and rejected apart; days without any are left out.
   */
  countSignalsPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]>;

  // Agents.
  createAgent(agent: Agent): Promise<void>;
  getAgent(id: string): Promise<Agent | null>;
  /** Read afresh on every call as far as a rotation, a deletion or a rename is concerned: never a stale identity. */
  findAgentByTokenHash(tokenHash: string): Promise<AgentIdentity | null>;
  /** Agents (of one account, or all), newest first, a page at a time, each state as its stored JSON text. */
  listAgents(filter: AgentFilter): Promise<RecordPage<AgentEntry>>;
  /**
   * Gives the agent a new token digest; null when no such agent. The old token is refused from
   * this commit on, and the agent's watchers of deliveries (every process) are woken, so open
   * sessions on the old token see the change and close.
   */
  rotateAgentToken(agentId: string, tokenHash: string): Promise<Agent | null>;
  /**
   * Removes the agent with its deliveries (so nothing queued for it is ever handed out), unless
   * a source routes to it by id: removing it from that list would widen the source's routing to
   * every agent of the account. Wakes its watchers as `rotateAgentToken` does.
   */
  deleteAgent(agentId: string): Promise<DeleteAgentOutcome>;
  /** Records the agent's latest account snapshot and that it was seen at `now`. */
  saveAgentState(agentId: string, state: unknown, now: string): Promise<void>;
  touchAgent(agentId: string, now: string): Promise<void>;

  // Sources.
  createSource(source: Source): Promise<void>;
  getSource(id: string): Promise<Source | null>;
  findSourceByAuthKey(authKey: string): Promise<Source | null>;
  /**
   * Applies the patch; null when no such source. A new `maxSignalAgeSeconds` applies, in the
   * same commit, to the source's deliveries not yet final (`queued`, or `delivered` and not
   * acknowledged) whose deadline is still ahead at `now`: each then expires at its signal's
   * receivedAt plus the new age. One already past its deadline keeps it, whether or not the
   * sweep has marked it yet: a raise never revives a signal that was due to expire.
   */
  updateSource(id: string, patch: SourcePatch, now: string): Promise<Source | null>;
  /** Sources (of one account, or all), newest first, a page at a time. */
  listSources(filter: SourceFilter): Promise<RecordPage<Source>>;
  /**
   * Removes the source, its signal log (with the deliveries of its signals, so none still
   * queued is handed out) and its idempotency keys; false when no such source. Its key is
   * refused from this commit on.
   */
  deleteSource(id: string): Promise<boolean>;

  // Dashboard sign-ins.
  /** Records the session, and removes the sessions that expired at or before its createdAt. */
  createDashboardSession(session: DashboardSession): Promise<void>;
  getDashboardSession(idDigest: string): Promise<DashboardSession | null>;
  /** Ends the session; true when there was one. */
  deleteDashboardSession(idDigest: string): Promise<boolean>;

  // The inbound hot path.
  /**
   * Records one inbound request in the source's signal log, atomically with everything it
   * implies: the idempotency-key lookup, the conditional quota charge and the deliveries to
   * the routed agents. Resolves after the commit. Fails with `SourceChangedError`, recording
   * nothing, when the source's revision is no longer `sourceRevision`; no change of the source
   * commits between that comparison and the request's commit.
   */
  ingest(request: IngestRequest): Promise<IngestOutcome>;

  // The signal log.
  listSignals(filter: SignalFilter): Promise<SignalPage>;
  /** The same page with its JSON columns as stored (what the admin API answers it from). */
  listLogEntries(filter: SignalFilter): Promise<LogEntryPage>;
  getSignal(id: string): Promise<SignalWithDeliveries | null>;

  // Retention.
  /**
   * Deletes at most `limit` signal records received before `before`, oldest first, with their
   * deliveries; a signal with a delivery not yet final (queued or delivered), or named by an
   * idempotency key, is kept. Answers how many were deleted. Usage counts are kept apart and
   * are not touched.
   */
  pruneSignals(before: string, limit: number): Promise<number>;
  /** Deletes at most `limit` idempotency keys created before `before`; answers how many. */
  pruneIdempotencyKeys(before: string, limit: number): Promise<number>;

  // Delivery to agents.
  /**
   * Every agent with how many of its deliveries are not yet final (`queued`, or `delivered`
   * and not acknowledged), agents with none included: the metrics' queue depth.
   */
  countOpenDeliveries(): Promise<AgentQueueDepth[]>;
  /**
   * The agent's unacknowledged deliveries, oldest (lowest seq) first, at most `limit`.
   * Unacknowledged deliveries whose `expiresAt` is at or before `now` are marked `expired`
   * and left out (a late market order is worse than none); the rest are marked `delivered`
   * (deliveredAt set the first time, attempts + 1) and answered. This is a poll's hand-out:
   * while a WebSocket session of the agent is open in another process on the same database, it
   * takes nothing and throws `AgentSessionOpenError` (a session hands out through its claim).
   */
  takeDeliveries(agentId: string, now: string, limit: number): Promise<AgentSignal[]>;
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
  expireDeliveries(now: string, limit: number): Promise<number>;
  /**
   * Claims the agent's WebSocket push session for this process, against every other process on
   * the same database; null while another holds it. A store that one process serves (SQLite)
   * always grants it: that process keeps its own sessions apart. `tokenHash` is the digest of
   * the token the session was opened with: its hand-outs check it (`SessionHandOut.revoked`).
   */
  claimAgentSession(agentId: string, tokenHash: string): Promise<AgentSessionClaim | null>;
  /** Whether another process on the same database holds the agent's push session (SQLite: never). */
  agentSessionOpenElsewhere(agentId: string): Promise<boolean>;
  ackDelivery(agentId: string, signalId: string, ack: Ack, now: string): Promise<AckOutcome>;
  /**
   * Calls `listener` with the ids of agents that have new deliveries, after the commit that
   * queued them, from this process or (PostgreSQL) any process on the same database.
   * Answers a function that stops the notifications.
   */
  watchDeliveries(listener: (agentIds: string[]) => void): () => void;
  /**
   * Tells this store's watchers of deliveries another connection of the same process committed
   * (the embedded store's inbound thread), maybe before their sync: a hand-out syncs for itself.
   */
  announceDeliveries(agentIds: string[]): void;

  /**
   * Why the store cannot be reached now (a sentence), or null when it answers: what
   * `GET /readyz` reports, so a load balancer stops sending signals an instance cannot store.
   * It takes no connection the requests would use (PostgreSQL probes on one of its own).
   */
  reachabilityProblem(): Promise<string | null>;

  /**
   * Writes a consistent copy of the whole store to `file` (which must not exist) while the
   * server may be writing: `signalgate backup`. Throws `BackupError` saying why it cannot, or,
   * on PostgreSQL, which of PostgreSQL's own tools to use instead.
   */
  backup(file: string): Promise<void>;
}

export interface AgentQueueDepth {
  agentId: string;
  open: number;
}

/** A page request of a list, in the signal log's paging style. */
export interface PageRequest {
  limit: number;
  /** Only records older (createdAt, then id) than the record with this id. */
  before?: string;
}

/** One page of a list, newest first. */
export interface RecordPage<T> {
  items: T[];
  /** The id to pass as `before` for the following page; null when there is none. */
  next: string | null;
}

export interface SourceFilter extends PageRequest {
  accountId?: string;
}

export interface AgentFilter extends PageRequest {
  accountId?: string;
}

/** Signals logged on one UTC day. */
export interface DayCount {
  /** `YYYY-MM-DD`. */
  day: string;
  accepted: number;
  rejected: number;
}

export type DeleteAgentOutcome =
  | { kind: 'deleted' }
  | { kind: 'not_found' }
  /** Sources that route to the agent by id: take it out of their agentIds first. */
  | { kind: 'routed'; sourceIds: string[] };

export interface AccountPatch {
  name?: string;
  monthlySignalQuota?: number;
}

export interface SourcePatch {
  name?: string;
  active?: boolean;
  hmacSecret?: string | null;
  agentIds?: string[];
  maxSignalAgeSeconds?: number;
  duplicateWindowSeconds?: number;
  allowedIps?: string[];
  /** A new auth key, in clear: the store keeps only its digest and hint (`storedAuthKey`). */
  authKey?: string;
}

export interface IngestRequest {
  /** The id the signal gets when this request is a new one. */
  id: string;
  sourceId: string;
  /**
   * The source's revision the request was checked against. When the source has another one at
   * the commit, nothing is recorded and `ingest` fails with `SourceChangedError`.
   */
  sourceRevision: number;
  accountId: string;
  receivedAt: string;
  /** `YYYY-MM` of `receivedAt` in UTC: the quota period charged. */
  period: string;
  contentType: string | null;
  rawBody: string;
  /**
   * From the `Idempotency-Key` header; null when absent or the request was not authenticated.
   * The key is bound to the recorded answer for `idempotencySince`…now, except a 429 quota
   * refusal, which is temporary: a retry with the same key is then evaluated afresh.
   */
  idempotencyKey: string | null;
  /** A digest of what makes the request the same request (content type and body). */
  requestHash: string | null;
  /** Repeats with the same key are answered from the original while it is younger than this. */
  idempotencySince: string;
  /**
   * The source's duplicate guard, when it is on: the SHA-256 hex of the raw body, kept with an
   * accepted signal, and the start of the window. An accepted request is logged as a duplicate
   * when the source's latest accepted signal at or after `since` has the same digest: a repeat
   * of the signal just before it, not of any earlier one, so close, open, close executes every
   * close. `since` null: the request cannot be a repeat (an action that changes nothing when
   * applied twice: closes, cancels, position targets), and its digest is only kept, so a later
   * entry compares with it. Null: guard off.
   */
  duplicateCheck: { bodyDigest: string; since: string | null } | null;
  verdict: IngestVerdict;
}

export type IngestVerdict =
  /**
   * A valid signal: charge one unit of the account's quota unless exhausted (then it is
   * recorded as rejected with 429 QUOTA_SIGNALS_IN), and queue one delivery per routed agent
   * (the source's agentIds, or every agent of the account when that list is empty), each
   * expiring at `expiresAt`. `quotaExhausted` is the problem recorded (code QUOTA_SIGNALS_IN,
   * httpStatus 429) when the charge fails.
   */
  | {
      kind: 'accept';
      signal: NormalizedSignal;
      /**
       * `signal` as JSON text, made once by the caller: the log stores it and the inbound answer
       * embeds it, rather than each serialising the signal again.
       */
      signalJson: string;
      expiresAt: string;
      quotaExhausted: Problem;
    }
  /** A refused request: logged with its status and problems, never charged or delivered. */
  | { kind: 'reject'; httpStatus: number; problems: Problem[] };

export type IngestOutcome =
  /** The request was new and is now in the log: accepted (status `queued`) or rejected. */
  | { kind: 'recorded'; record: SignalRecord }
  /** A repeat of an earlier request with the same idempotency key: the original record. */
  | { kind: 'replay'; record: SignalRecord }
  /**
   * The key is held, within the window, by a different request (`originalId`): this request is
   * now in the log as its own rejected entry (422 IDEMPOTENCY_KEY_REUSED, never charged or
   * delivered), and the key stays bound to the original.
   */
  | { kind: 'key_reused'; record: SignalRecord; originalId: string }
  /**
   * The raw body repeats `original`, accepted on the same source within its duplicate window:
   * this request is logged as `record` (status `duplicate`, never charged or delivered) and
   * answered with the original's 202.
   */
  | { kind: 'duplicate'; record: SignalRecord; original: SignalRecord };

export interface SignalFilter {
  sourceId?: string;
  status?: SignalStatus;
  /** Only signals with at least one delivery in this status. */
  outcome?: DeliveryStatus;
  /** Only signals whose normalized symbol is this. */
  symbol?: string;
  limit: number;
  /** Only signals older (in log order: receivedAt, then id) than the signal with this id. */
  before?: string;
}

/** One page of the signal log, newest first. */
export interface SignalPage {
  signals: SignalRecord[];
  /** The id to pass as `before` for the following page; null when there is none. */
  next: string | null;
}

export interface LogEntryPage {
  entries: LogEntry[];
  /** The id to pass as `before` for the following page; null when there is none. */
  next: string | null;
}

export interface Ack {
  status: AckStatus;
  message: string | null;
  result: unknown;
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
