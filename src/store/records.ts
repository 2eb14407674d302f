import type { Problem } from '../errors/catalog.js';
import type { NormalizedSignal } from '../language/index.js';
import type { Delivery, DeliveryStatus } from '../protocol/delivery.js';

/** Records the store keeps. Times are ISO 8601 strings in UTC with millisecond precision. */

export interface Account {
  id: string;
  name: string;
  monthlySignalQuota: number;
  createdAt: string;
}

export interface Usage {
  /** Calendar month in UTC, `YYYY-MM`. */
  period: string;
  used: number;
  limit: number;
}

export interface Source {
  id: string;
  accountId: string;
  name: string;
  /** SHA-256 hex of the auth key: the key itself is shown once (at creation and rotation) and never stored. */
  authKeyHash: string;
  /** The key's first characters, to tell keys apart; not enough to send with. */
  authKeyHint: string;
  active: boolean;
  /** Never returned by the API; `hmac: boolean` is shown instead. */
  hmacSecret: string | null;
  /** Agents this source routes to; empty means every agent of the account. */
  agentIds: string[];
  maxSignalAgeSeconds: number;
  /**
   * The duplicate guard: a request whose raw body equals that of a signal accepted on this
   * source within this many seconds is answered as that signal and not accepted again. 0: off.
   */
  duplicateWindowSeconds: number;
  /**
   * Client addresses inbound requests are taken from: IPv4/IPv6 addresses, CIDR ranges and the
   * word `tradingview`; empty means any address.
   */
  allowedIps: string[];
  createdAt: string;
  /**
   * How many changes the source has had (0 when created). An inbound request is committed only
   * while the source still has the revision its checks were made against.
   */
  revision: number;
}

export interface Agent {
  id: string;
  accountId: string;
  name: string;
  /** SHA-256 hex of the agent token; the token itself is shown once, at creation. */
  tokenHash: string;
  createdAt: string;
  lastSeenAt: string | null;
  /** The latest account snapshot the agent published (PUT /api/agent/state). */
  state: unknown;
}

/**
 * Who an agent token belongs to: what every agent request is checked against, without the
 * agent's reported state or presence (read by the check on every request, they would cost it
 * the most and are never needed there).
 */
export type AgentIdentity = Pick<Agent, 'id' | 'accountId' | 'name' | 'tokenHash'>;

/**
 * What the door decided, final once logged (what the agents did is the record's `outcome`).
 * `accepted`: answered 202, charged and queued for its agents. `rejected`: refused with an
 * error answer. `duplicate`: its raw body repeated a signal accepted on the same source within
 * the source's duplicate window: answered with that signal's 202 again (`duplicateOf`), neither
 * charged nor delivered.
 */
export type SignalStatus = 'accepted' | 'rejected' | 'duplicate';

export const SIGNAL_STATUSES: readonly SignalStatus[] = ['accepted', 'rejected', 'duplicate'];

/** A delivery's statuses, for the store's users that filter on them (the signal log's `outcome`). */
export type { DeliveryStatus };

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = [
  'queued',
  'delivered',
  'executed',
  'rejected',
  'failed',
  'expired',
  'halted',
];

/** How many of a signal's deliveries are in each status, e.g. `{"executed": 1, "expired": 1}`; `{}`: no agent. */
export type Outcome = Partial<Record<DeliveryStatus, number>>;

/** One entry of a source's signal log: every request that named a valid source key. */
export interface SignalRecord {
  id: string;
  sourceId: string;
  accountId: string;
  receivedAt: string;
  status: SignalStatus;
  /** The HTTP status the request was answered with. */
  httpStatus: number;
  /** Error code and sentence for a rejected request. */
  code: string | null;
  detail: string | null;
  param: string | null;
  errors: Problem[] | null;
  contentType: string | null;
  /** The body as received (decoded as UTF-8). */
  rawBody: string;
  signal: NormalizedSignal | null;
  idempotencyKey: string | null;
  /** Quota state right after this signal was charged (accepted signals only). */
  quota: Usage | null;
  /** The accepted signal this request repeated (status `duplicate` only). */
  duplicateOf: string | null;
  /** Its deliveries by status (accepted signals only; `{}` when it had no agent), as read. */
  outcome: Outcome | null;
}

export interface SignalWithDeliveries extends SignalRecord {
  deliveries: Delivery[];
}

/** A delivery the store marked expired when handing out its agent's queue. */
export interface ExpiredDelivery {
  signalId: string;
  agentId: string;
  receivedAt: string;
  expiresAt: string;
  /** When it was found expired. */
  expiredAt: string;
}

/** One signed-in dashboard: what the store keeps of it. */
export interface DashboardSession {
  /** SHA-256 hex of the cookie's session id: a leaked row signs no one in. */
  idDigest: string;
  /** SHA-256 hex of the admin token signed in with: a changed admin token ends the session. */
  adminTokenDigest: string;
  createdAt: string;
  expiresAt: string;
}
