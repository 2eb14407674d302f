import { ErrorCode } from '../errors/catalog.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../errors/problem-body.js';
import { secondsUntilReset } from '../metering/quota-period.js';
import type { SignalRecord } from '../store/records.js';
import type { IngestOutcome } from '../store/store.js';

/** The answer to send, already serialised, and the signal log entry behind it (if any). */
export interface InboundAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  signalId: string | null;
  /** No source has the key (401 `INVALID_SOURCE_KEY`): nothing was recorded. */
  unknownKey: boolean;
}

/**
 * The answer for a logged request, built from its log entry. A replay (same Idempotency-Key,
 * same request) is built from the original record, so the sender sees the original answer
 * again; only a replay is one. A request refused because its key is held by a different
 * request is an entry of its own (422 IDEMPOTENCY_KEY_REUSED), answered as any refusal.
 */
export function answerFor(outcome: IngestOutcome, nowMillis: number): InboundAnswer {
  const { record } = outcome;
  const answer = recordAnswer(record, nowMillis);
  const headers = answer.headers;
  if (outcome.kind === 'replay') headers['idempotent-replayed'] = 'true';
  return { status: answer.status, headers, body: JSON.stringify(answer.body), signalId: record.id, unknownKey: false };
}

function recordAnswer(record: SignalRecord, nowMillis: number): { status: number; headers: Record<string, string>; body: unknown } {
  if (record.status === 'queued') {
    return {
      status: 202,
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: {
        id: record.id,
        status: 'queued',
        signal: record.signal,
        quota: record.quota && { used: record.quota.used, limit: record.quota.limit, period: record.quota.period },
      },
    };
  }
  const code = (record.code ?? ErrorCode.INTERNAL_ERROR) as ErrorCode;
  const first = { code, detail: record.detail ?? '', ...(record.param !== null ? { param: record.param } : {}) };
  const headers: Record<string, string> = { 'content-type': PROBLEM_CONTENT_TYPE };
  if (code === ErrorCode.QUOTA_SIGNALS_IN) {
    const period = record.receivedAt.slice(0, 7);
    headers['retry-after'] = String(secondsUntilReset(period, nowMillis));
  }
  const problems = record.errors && record.errors.length > 1 ? record.errors : [first];
  return { status: record.httpStatus, headers, body: problemBody(problems, record.httpStatus) };
}
