import type { EffectiveRiskRules } from '../../risk/risk-rules.js';
import type { Problem } from '../../errors/catalog.js';
import type { NormalizedSignal } from '../../language/index.js';
import pg from 'pg';
import type { AgentEntry } from '../agent-entry.js';
import { logEntryOfColumns, type LogEntry } from '../log-entry.js';
import type { Account, Agent, AgentIdentity, SignalRecord, Source } from '../records.js';
import { signalStatusOf } from '../stored-signal-status.js';
import type { AgentSignal } from '../../protocol/agent-signal.js';
import type { AckTimings, Delivery, DeliveryStatus } from '../../protocol/delivery.js';

/** Rows as node-postgres answers them: timestamptz as Date, json parsed, bytea as Buffer. */

export interface AccountRow {
  id: string;
  name: string;
  monthly_signal_quota: number;
  created_at: Date;
}

export interface SourceRow {
  id: string;
  account_id: string;
  name: string;
  auth_key_hint: string;
  auth_key_hash: string;
  active: boolean;
  hmac_secret: string | null;
  agent_ids: string[];
  max_signal_age_seconds: number;
  duplicate_window_seconds: number;
  allowed_ips: string[];
  created_at: Date;
  revision: number;
}

export interface AgentRow {
  id: string;
  account_id: string;
  name: string;
  token_hash: string;
  created_at: Date;
  last_seen_at: Date | null;
  state: unknown;
}

/** The columns a token check reads (`AgentIdentity`). */
export type AgentIdentityRow = Pick<AgentRow, 'id' | 'account_id' | 'name' | 'token_hash'>;

export interface SignalRow {
  id: string;
  source_id: string;
  account_id: string;
  received_at: Date;
  status: string;
  http_status: number;
  code: string | null;
  detail: string | null;
  param: string | null;
  errors: Problem[] | null;
  content_type: string | null;
  raw_body: Buffer;
  normalized: NormalizedSignal | null;
  idempotency_key: string | null;
  quota_period: string | null;
  quota_used: number | null;
  quota_limit: number | null;
  duplicate_of: string | null;
}

export interface DeliveryRow {
  signal_id: string;
  agent_id: string;
  seq: number;
  status: string;
  expires_at: Date;
  delivered_at: Date | null;
  attempts: number;
  acked_at: Date | null;
  message: string | null;
  result: unknown;
  acked_after_expiry: boolean;
  timings: AckTimings | null;
}

export interface AgentSignalRow {
  signal_id: string;
  seq: number;
  expires_at: Date;
  source_id: string;
  received_at: Date;
  normalized: NormalizedSignal;
  /** The effective risk rules the signal was received under (JSON text), or null. */
  risk: string | null;
  /** A flatten's reason (its log entry only), or null. */
  flatten: string | null;
}

/**
 * A JSON parameter. Always serialized here: node-postgres would turn a JS array into a
 * PostgreSQL array literal. Absent and null are both stored as NULL.
 */
export function jsonParam(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value);
}

/**
 * PostgreSQL text cannot hold NUL. Free text that must be recorded whatever it holds (a
 * rejection's detail quoting the input, an agent's message) gets U+FFFD in its place.
 */
export function textParam(value: string | null): string | null {
  return value === null ? null : value.replaceAll('\u0000', '\uFFFD');
}

function iso(value: Date): string {
  return value.toISOString();
}

function isoOrNull(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

export function accountOf(row: AccountRow): Account {
  return { id: row.id, name: row.name, monthlySignalQuota: row.monthly_signal_quota, createdAt: iso(row.created_at) };
}

export function sourceOf(row: SourceRow): Source {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    authKeyHash: row.auth_key_hash,
    authKeyHint: row.auth_key_hint,
    active: row.active,
    hmacSecret: row.hmac_secret,
    agentIds: row.agent_ids,
    maxSignalAgeSeconds: row.max_signal_age_seconds,
    duplicateWindowSeconds: row.duplicate_window_seconds,
    allowedIps: row.allowed_ips,
    createdAt: iso(row.created_at),
    revision: row.revision,
  };
}

export function agentOf(row: AgentRow): Agent {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    tokenHash: row.token_hash,
    createdAt: iso(row.created_at),
    lastSeenAt: isoOrNull(row.last_seen_at),
    state: row.state ?? null,
  };
}

/**
 * The columns of an agent's entry (`AGENT_ENTRY_COLUMNS`): its state as the text stored, not
 * parsed by node-postgres, and its times as text, not made Dates (as the log's pages read them).
 */
export interface AgentEntryRow {
  id: string;
  account_id: string;
  name: string;
  created_at: string;
  last_seen_at: string | null;
  state_json: string | null;
}

/**
 * An agent's latest snapshot: its row in `agent_states` (migration 025), else what an instance of
 * an earlier release wrote into the agent's own row. `agents` is the agents table or its alias.
 */
export function agentStateSql(agents: string): string {
  return `COALESCE((SELECT st.state FROM agent_states st WHERE st.agent_id = ${agents}.id), ${agents}.state)`;
}

/** The columns of an `AgentRow`, of the agents table or its alias `agents`. */
export function agentColumnsSql(agents: string): string {
  return `${agents}.id, ${agents}.account_id, ${agents}.name, ${agents}.token_hash, ${agents}.created_at, ${agents}.last_seen_at, ${agentStateSql(agents)} AS state`;
}

export const AGENT_ENTRY_COLUMNS = `id, account_id, name, created_at::text, last_seen_at::text, ${agentStateSql('agents')}::text AS state_json`;

export function agentEntryOf(row: AgentEntryRow): AgentEntry {
  return {
    id: row.id,
    accountId: row.account_id,
    name: row.name,
    createdAt: isoOfTimestamptz(row.created_at),
    lastSeenAt: row.last_seen_at === null ? null : isoOfTimestamptz(row.last_seen_at),
    stateJson: row.state_json,
  };
}

export function agentIdentityOf(row: AgentIdentityRow): AgentIdentity {
  return { id: row.id, accountId: row.account_id, name: row.name, tokenHash: row.token_hash };
}

export function signalOf(row: SignalRow): SignalRecord {
  return {
    id: row.id,
    sourceId: row.source_id,
    accountId: row.account_id,
    receivedAt: iso(row.received_at),
    status: signalStatusOf(row.status, row.duplicate_of),
    httpStatus: row.http_status,
    code: row.code,
    detail: row.detail,
    param: row.param,
    errors: row.errors,
    contentType: row.content_type,
    rawBody: row.raw_body.toString('utf8'),
    signal: row.normalized,
    idempotencyKey: row.idempotency_key,
    quota:
      row.quota_period === null || row.quota_used === null || row.quota_limit === null
        ? null
        : { period: row.quota_period, used: row.quota_used, limit: row.quota_limit },
    duplicateOf: row.duplicate_of,
    // Counted from the deliveries by the reader that has them.
    outcome: null,
  };
}

/**
 * The columns of a log entry, in the order `logEntryOf` reads them (`s` is the `signals` table),
 * read as arrays (`rowMode: 'array'`). The JSON columns and the time come as text: node-postgres
 * would parse the JSON only for the answer to write it again, and make a Date of every time.
 */
export const LOG_ENTRY_COLUMNS = `s.id, s.source_id, s.account_id, s.received_at::text, s.status, s.http_status, s.code,
  s.detail, s.param, s.errors::text, s.content_type, s.raw_body, s.normalized::text, s.idempotency_key, s.quota_period,
  s.quota_used, s.quota_limit, s.duplicate_of`;

/** A row of `LOG_ENTRY_COLUMNS`. */
export function logEntryOf(row: unknown[]): LogEntry {
  return logEntryOfColumns(row, isoOfTimestamptz(row[3] as string), (row[11] as Buffer).toString('utf8'));
}

/** A time in UTC to the millisecond as PostgreSQL writes it (DateStyle ISO, TimeZone UTC), e.g. `2026-11-27 18:10:47.72+00`. */
const UTC_MILLIS = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d)(?:\.(\d{1,3}))?\+00$/;
const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ) as (text: string) => Date;

/**
 * A timestamptz's text as `toISOString` writes it, as node-postgres's Date would give it: read
 * directly when it is in UTC to the millisecond (every time the service writes), through that
 * Date otherwise (another session time zone, microseconds).
 */
export function isoOfTimestamptz(text: string): string {
  const parts = UTC_MILLIS.exec(text);
  if (parts === null) return parseTimestamptz(text).toISOString();
  return `${parts[1]}T${parts[2]}.${(parts[3] ?? '').padEnd(3, '0')}Z`;
}

export function deliveryOf(row: DeliveryRow): Delivery {
  return {
    signalId: row.signal_id,
    agentId: row.agent_id,
    seq: row.seq,
    status: row.status as DeliveryStatus,
    expiresAt: iso(row.expires_at),
    deliveredAt: isoOrNull(row.delivered_at),
    attempts: row.attempts,
    ackedAt: isoOrNull(row.acked_at),
    message: row.message,
    result: row.result ?? null,
    ackedAfterExpiry: row.acked_after_expiry,
    timings: row.timings ?? null,
  };
}

export function agentSignalOf(row: AgentSignalRow): AgentSignal {
  return {
    id: row.signal_id,
    seq: row.seq,
    sourceId: row.source_id,
    receivedAt: iso(row.received_at),
    expiresAt: iso(row.expires_at),
    signal: row.normalized,
    ...(row.risk === null || row.risk === undefined ? {} : { risk: JSON.parse(row.risk) as EffectiveRiskRules }),
    ...(row.flatten === null || row.flatten === undefined ? {} : { flatten: { reason: row.flatten } }),
  };
}

/**
 * A `signals` row as `row_to_json` renders it inside a server-side function: timestamptz as
 * an ISO string with offset, bytea as `\x` hex, json columns embedded.
 */
export type SignalJsonRow = Omit<SignalRow, 'received_at' | 'raw_body'> & { received_at: string; raw_body: string };

export function signalOfJson(row: SignalJsonRow): SignalRecord {
  return signalOf({
    ...row,
    received_at: new Date(row.received_at),
    raw_body: Buffer.from(row.raw_body.startsWith('\\x') ? row.raw_body.slice(2) : row.raw_body, 'hex'),
  });
}
