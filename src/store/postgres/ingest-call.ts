import type { IngestRequest } from '../store.js';
import type { IngestDone } from '../ingest-done.js';
import type { Outcome, SignalRecord } from '../records.js';
import { acceptedVerdict, duplicateVerdict, ingestRecord, rejectedVerdict } from '../ingest-record.js';
import { isoTime } from '../iso-time.js';
import { KEY_REUSED_DETAIL, keyReusedProblem } from '../key-reused-problem.js';
import { SourceChangedError } from '../source-changed.js';
import { signalOfJson, textParam, type SignalJsonRow } from './postgres-rows.js';

/**
 * One request as `signalgate_ingest` (migrations/postgres/functions.sql) takes it. The batch travels as
 * one JSON text, which PostgreSQL decodes field by field; a decoded string may hold neither
 * NUL nor a lone surrogate, so JSON columns travel as JSON text inside a string (their escapes
 * stay escapes) and the raw body as base64.
 */
export interface IngestItem {
  n: number;
  id: string;
  source_id: string;
  /** The revision the request was checked against (see `signalgate_ingest_items` in migrations/postgres/functions.sql). */
  source_revision: number;
  account_id: string;
  received_at: string;
  period: string;
  content_type: string | null;
  raw_body: string;
  idempotency_key: string | null;
  request_hash: string | null;
  idempotency_since: string;
  accept: boolean;
  /** JSON text of the normalized signal (accept only). */
  normalized: string | null;
  expires_at: string | null;
  /** The refusal recorded: the verdict's for a reject, the 429 for an accept the quota refuses. */
  http_status: number;
  code: string | null;
  detail: string | null;
  param: string | null;
  /** JSON text of the problems, when several. */
  errors: string | null;
  /**
   * With a key: the detail recorded when a different request holds it, `{signal}` standing for
   * that request's signal id (migrations/postgres/functions.sql).
   */
  key_reused_detail: string | null;
  /**
   * The duplicate guard, when the source has it on: SHA-256 hex of the raw body, and the window's
   * start (null: the request cannot be a repeat; its digest is only kept).
   */
  body_digest: string | null;
  duplicate_since: string | null;
  /** The normalized signal's symbol (accept only), for the log's symbol filter. */
  symbol: string | null;
}

/** What `signalgate_ingest` answers for one item. */
export type IngestAnswer =
  | {
      n: number;
      ok: true;
      kind: 'recorded';
      charged: boolean;
      used: number | null;
      limit: number | null;
      /** The agents the signal was queued for. */
      agents: string[];
      /** The agents it was halted for (absent from a function before revision 9). */
      halted?: string[];
    }
  | { n: number; ok: true; kind: 'replay'; record: SignalJsonRow; outcome: Outcome }
  /** Logged as a duplicate of `record`, the signal accepted earlier with the same body. */
  | { n: number; ok: true; kind: 'duplicate'; record: SignalJsonRow; outcome: Outcome }
  /** Recorded as a refusal of its own; `original` holds the key. */
  | { n: number; ok: true; kind: 'key_reused'; original: string }
  /** Not written: `state` is a SQLSTATE, or `source_changed` (checked against another revision). */
  | { n: number; ok: false; state: string; message: string };

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/**
 * A text value as a separate statement parameter would have stored it: node-postgres encodes a
 * lone surrogate as U+FFFD, and PostgreSQL refuses NUL (that item fails, as it always did).
 */
function text(value: string, field: string): string;
function text(value: string | null, field: string): string | null;
function text(value: string | null, field: string): string | null {
  if (value === null) return null;
  if (value.includes('\u0000')) {
    throw Object.assign(new Error(`invalid byte sequence for encoding "UTF8": 0x00 (in ${field})`), { code: '22021' });
  }
  return value.replace(LONE_SURROGATE, '\uFFFD');
}

/**
 * The item for `request`, at position `n` of the batch. Throws (for this request alone) on
 * what the database would refuse anyway: a time that is not one, NUL in a text field.
 */
export function ingestItem(request: IngestRequest, n: number): IngestItem {
  const verdict = request.verdict;
  const refusal =
    verdict.kind === 'accept'
      ? rejectedVerdict(429, [verdict.quotaExhausted])
      : rejectedVerdict(verdict.httpStatus, verdict.problems);
  if (!Number.isInteger(refusal.httpStatus)) throw new RangeError(`not an HTTP status: ${refusal.httpStatus}`);
  return {
    n,
    id: text(request.id, 'id'),
    source_id: text(request.sourceId, 'sourceId'),
    source_revision: request.sourceRevision,
    account_id: text(request.accountId, 'accountId'),
    received_at: isoTime(request.receivedAt),
    period: text(request.period, 'period'),
    content_type: text(request.contentType, 'contentType'),
    raw_body: Buffer.from(request.rawBody, 'utf8').toString('base64'),
    idempotency_key: text(request.idempotencyKey, 'idempotencyKey'),
    request_hash: text(request.requestHash, 'requestHash'),
    idempotency_since: isoTime(request.idempotencySince),
    accept: verdict.kind === 'accept',
    normalized: verdict.kind === 'accept' ? verdict.signalJson : null,
    expires_at: verdict.kind === 'accept' ? isoTime(verdict.expiresAt) : null,
    http_status: refusal.httpStatus,
    code: text(refusal.code, 'code'),
    // Free text is recorded whatever it holds: NUL becomes U+FFFD, as everywhere in this store.
    detail: text(textParam(refusal.detail), 'detail'),
    param: text(textParam(refusal.param), 'param'),
    errors: refusal.errors === null ? null : JSON.stringify(refusal.errors),
    key_reused_detail: request.idempotencyKey === null ? null : KEY_REUSED_DETAIL,
    body_digest: request.duplicateCheck === null ? null : text(request.duplicateCheck.bodyDigest, 'bodyDigest'),
    duplicate_since: request.duplicateCheck?.since == null ? null : isoTime(request.duplicateCheck.since),
    symbol: verdict.kind === 'accept' ? text(verdict.signal.symbol, 'symbol') : null,
  };
}

/** What the request came to, from the function's answer for its item. */
export function ingestDone(request: IngestRequest, answer: IngestAnswer): IngestDone {
  if (!answer.ok) {
    if (answer.state === 'source_changed') throw new SourceChangedError(request.sourceId);
    throw Object.assign(new Error(answer.message), { code: answer.state });
  }
  if (answer.kind === 'replay')
    return { outcome: { kind: 'replay', record: withOutcome(answer.record, answer.outcome) }, agentIds: [] };
  if (answer.kind === 'duplicate') {
    const original = withOutcome(answer.record, answer.outcome);
    const signal = request.verdict.kind === 'accept' ? request.verdict.signal : null;
    const record = ingestRecord(request, duplicateVerdict(signal), { duplicateOf: original.id });
    return { outcome: { kind: 'duplicate', record, original }, agentIds: [] };
  }
  if (answer.kind === 'key_reused') {
    const record = ingestRecord(request, rejectedVerdict(422, [keyReusedProblem(answer.original)]));
    return { outcome: { kind: 'key_reused', record, originalId: answer.original }, agentIds: [] };
  }
  const verdict = request.verdict;
  let record;
  if (verdict.kind === 'accept') {
    record = ingestRecord(
      request,
      answer.charged && answer.used !== null && answer.limit !== null
        ? acceptedVerdict(verdict.signal, { period: request.period, used: answer.used, limit: answer.limit })
        : rejectedVerdict(429, [verdict.quotaExhausted]),
      { agents: answer.agents.length + (answer.halted?.length ?? 0), halted: answer.halted?.length ?? 0 },
    );
  } else {
    record = ingestRecord(request, rejectedVerdict(verdict.httpStatus, verdict.problems));
  }
  return { outcome: { kind: 'recorded', record }, agentIds: answer.agents };
}

/** A signal row the function answered, with its deliveries by status (an accepted one's outcome). */
function withOutcome(row: SignalJsonRow, outcome: Outcome | undefined): SignalRecord {
  const record = signalOfJson(row);
  return record.status === 'accepted' ? { ...record, outcome: outcome ?? {} } : record;
}
