import type { NormalizedSignal } from '../../language/index.js';
import type { AgentEntry } from '../agent-entry.js';
import { logEntryOfColumns, type LogEntry } from '../log-entry.js';
import type { Account, Agent, AgentIdentity, Source } from '../records.js';
import type { AgentSignal } from '../../protocol/agent-signal.js';
import type { EffectiveRiskRules } from '../../risk/risk-rules.js';
import type { AckTimings, Delivery, DeliveryStatus } from '../../protocol/delivery.js';

/** Rows as better-sqlite3 answers them (STRICT tables: TEXT, INTEGER, NULL only). */

export interface AccountRow {
  id: string;
  name: string;
  monthly_signal_quota: number;
  created_at: string;
}

export interface SourceRow {
  id: string;
  account_id: string;
  name: string;
  auth_key_hint: string;
  auth_key_hash: string;
  active: number;
  hmac_secret: string | null;
  agent_ids: string;
  max_signal_age_seconds: number;
  duplicate_window_seconds: number;
  allowed_ips: string;
  created_at: string;
  revision: number;
}

export interface AgentRow {
  id: string;
  account_id: string;
  name: string;
  token_hash: string;
  created_at: string;
  last_seen_at: string | null;
  state: string | null;
}

/** The columns a token check reads (`AgentIdentity`). */
export type AgentIdentityRow = Pick<AgentRow, 'id' | 'account_id' | 'name' | 'token_hash'>;

export interface DeliveryRow {
  signal_id: string;
  agent_id: string;
  seq: number;
  status: string;
  expires_at: string;
  delivered_at: string | null;
  attempts: number;
  acked_at: string | null;
  message: string | null;
  result: string | null;
  acked_after_expiry: number;
  timings: string | null;
}

export interface AgentSignalRow {
  signal_id: string;
  seq: number;
  expires_at: string;
  source_id: string;
  received_at: string;
  normalized: string;
  /** The effective risk rules the signal was received under (JSON), or null. */
  risk: string | null;
  /** A flatten's reason (its log entry only), or null. */
  flatten: string | null;
}

/** JSON text for a value that may be absent; absent and null are both stored as NULL. */
export function jsonText(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

function parseJson<T>(text: string | null): T | null {
  return text === null ? null : (JSON.parse(text) as T);
}

export function accountOf(row: AccountRow): Account {
  return { id: row.id, name: row.name, monthlySignalQuota: row.monthly_signal_quota, createdAt: row.created_at };
}

export function sourceOf(row: SourceRow): Source {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    authKeyHash: row.auth_key_hash,
    authKeyHint: row.auth_key_hint,
    active: row.active === 1,
    hmacSecret: row.hmac_secret,
    agentIds: JSON.parse(row.agent_ids) as string[],
    maxSignalAgeSeconds: row.max_signal_age_seconds,
    duplicateWindowSeconds: row.duplicate_window_seconds,
    allowedIps: JSON.parse(row.allowed_ips) as string[],
    createdAt: row.created_at,
    revision: row.revision,
  };
}

export function agentOf(row: AgentRow): Agent {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    tokenHash: row.token_hash,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    state: parseJson<unknown>(row.state),
  };
}

export function agentEntryOf(row: AgentRow): AgentEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    createdAt: row.created_at,
    lastSeenAt: row.last_seen_at,
    stateJson: row.state,
  };
}

export function agentIdentityOf(row: AgentIdentityRow): AgentIdentity {
  return { id: row.id, accountId: row.account_id, name: row.name, tokenHash: row.token_hash };
}

/**
 * The columns of a log entry, in the order `logEntryOf` reads them (`s` is the `signals` table).
 * Read as arrays (better-sqlite3's raw mode): an object per row, its 19 keys set one by one,
 * took twice as long as the row itself.
 */
export const LOG_ENTRY_COLUMNS = `s.id, s.source_id, s.account_id, s.received_at, s.status, s.http_status, s.code, s.detail,
  s.param, s.errors, s.content_type, s.raw_body, s.normalized, s.idempotency_key, s.quota_period, s.quota_used,
  s.quota_limit, s.duplicate_of`;

/** A row of `LOG_ENTRY_COLUMNS`. */
export function logEntryOf(row: unknown[]): LogEntry {
  return logEntryOfColumns(row, row[3] as string, row[11] as string);
}

export function deliveryOf(row: DeliveryRow): Delivery {
  return {
    signalId: row.signal_id,
    agentId: row.agent_id,
    seq: row.seq,
    status: row.status as DeliveryStatus,
    expiresAt: row.expires_at,
    deliveredAt: row.delivered_at,
    attempts: row.attempts,
    ackedAt: row.acked_at,
    message: row.message,
    result: parseJson<unknown>(row.result),
    ackedAfterExpiry: row.acked_after_expiry === 1,
    timings: parseJson<AckTimings>(row.timings),
  };
}

export function agentSignalOf(row: AgentSignalRow): AgentSignal {
  return {
    id: row.signal_id,
    seq: row.seq,
    sourceId: row.source_id,
    receivedAt: row.received_at,
    expiresAt: row.expires_at,
    signal: JSON.parse(row.normalized) as NormalizedSignal,
    ...(row.risk === null ? {} : { risk: JSON.parse(row.risk) as EffectiveRiskRules }),
    ...(row.flatten === null ? {} : { flatten: { reason: row.flatten } }),
  };
}
