import type { Problem } from '../errors/catalog.js';
import type { NormalizedSignal } from '../language/index.js';
import type { Delivery } from '../protocol/delivery.js';

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
  authKey: string;
  active: boolean;
  /** Never returned by the API; `hmac: boolean` is shown instead. */
  hmacSecret: string | null;
  /** Agents this source routes to; empty means every agent of the account. */
  agentIds: string[];
  maxSignalAgeSeconds: number;
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

/** `queued`: accepted at the door (202). `rejected`: refused at the door with an error answer. */
export type SignalStatus = 'queued' | 'rejected';

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
}

export interface SignalWithDeliveries extends SignalRecord {
  deliveries: Delivery[];
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
