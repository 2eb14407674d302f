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
  /** What the log must say of this request beyond its access line. */
  notice?: InboundNotice;
  /** No source has the key (401 `INVALID_SOURCE_KEY`): nothing was recorded. */
  unknownKey: boolean;
  /** What the account's notifications are told of this request, if anything. */
  alert?: InboundAlert;
}

/**
 * `refused`: a request of a known source was refused at the door. `quota`: this signal's charge
 * reached 80 % or 100 % of the account's monthly quota (each charge adds one, so each is reached once).
 */
export type InboundAlert =
  | { kind: 'refused'; accountId: string; sourceId: string; signalId: string; code: string; detail: string }
  | { kind: 'quota'; accountId: string; percent: 80 | 100; used: number; limit: number; period: string };

function alertOf(record: SignalRecord): InboundAlert | undefined {
  if (record.status === 'rejected') {
    return {
      kind: 'refused',
      accountId: record.accountId,
      sourceId: record.sourceId,
      signalId: record.id,
      code: record.code ?? '',
      detail: record.detail ?? '',
    };
  }
  const quota = record.status === 'accepted' ? record.quota : null;
  if (quota === null || quota.limit <= 0) return undefined;
  const percent = quota.used === quota.limit ? 100 : quota.used === Math.ceil(quota.limit * 0.8) ? 80 : null;
  return percent === null
    ? undefined
    : {
        kind: 'quota',
        accountId: record.accountId,
        percent,
        used: quota.used,
        limit: quota.limit,
        period: quota.period,
      };
}

/**
 * `no_agents`: accepted with no agent to deliver it to, so nobody will execute it (a warning).
 * `duplicate`: answered as `duplicateOf`, a signal accepted earlier with the same raw body.
 */
export type InboundNotice =
  | { kind: 'no_agents'; signalId: string; sourceId: string }
  | { kind: 'duplicate'; signalId: string; sourceId: string; duplicateOf: string };

/**
 * The answer for a logged request, built from its log entry. A replay (same Idempotency-Key,
 * same request) is built from the original record, so the sender sees the original answer
 * again; only a replay is one. A request refused because its key is held by a different
 * request is an entry of its own (422 IDEMPOTENCY_KEY_REUSED), answered as any refusal.
 * `signalJson` is the request's signal as JSON text (null when it had none), as the log stored it:
 * a new entry's answer embeds it rather than serialising the signal a second time.
 */
export function answerFor(outcome: IngestOutcome, nowMillis: number, signalJson: string | null): InboundAnswer {
  if (outcome.kind === 'duplicate') {
    // The original's answer, as a repeat with its Idempotency-Key would get; the log keeps this request.
    const answer = recordAnswer(outcome.original, nowMillis);
    return {
      status: answer.status,
      headers: answer.headers,
      body: JSON.stringify(answer.body),
      signalId: outcome.record.id,
      unknownKey: false,
      notice: {
        kind: 'duplicate',
        signalId: outcome.record.id,
        sourceId: outcome.record.sourceId,
        duplicateOf: outcome.original.id,
      },
    };
  }
  const { record } = outcome;
  if (outcome.kind === 'recorded' && record.status === 'accepted' && signalJson !== null) {
    const inbound: InboundAnswer = {
      status: 202,
      headers: { 'content-type': ACCEPTED_CONTENT_TYPE },
      body: acceptedBody(record, signalJson),
      signalId: record.id,
      unknownKey: false,
    };
    if (agentsOf(record) === 0) inbound.notice = { kind: 'no_agents', signalId: record.id, sourceId: record.sourceId };
    const alert = alertOf(record);
    if (alert) inbound.alert = alert;
    return inbound;
  }
  const answer = recordAnswer(record, nowMillis);
  const headers = answer.headers;
  if (outcome.kind === 'replay') headers['idempotent-replayed'] = 'true';
  const inbound: InboundAnswer = {
    status: answer.status,
    headers,
    body: JSON.stringify(answer.body),
    signalId: record.id,
    unknownKey: false,
  };
  if (outcome.kind === 'recorded' && record.status === 'accepted' && agentsOf(record) === 0) {
    inbound.notice = { kind: 'no_agents', signalId: record.id, sourceId: record.sourceId };
  }
  if (outcome.kind === 'recorded') {
    const alert = alertOf(record);
    if (alert) inbound.alert = alert;
  }
  return inbound;
}

const ACCEPTED_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The text `JSON.stringify` makes of an accepted entry's answer (`recordAnswer`), with the
 * signal's JSON as stored: the same bytes, one serialisation of the signal fewer per request.
 */
function acceptedBody(record: SignalRecord, signalJson: string): string {
  const quota =
    record.quota === null
      ? 'null'
      : `{"used":${JSON.stringify(record.quota.used)},"limit":${JSON.stringify(record.quota.limit)},"period":${JSON.stringify(record.quota.period)}}`;
  return `{"id":${JSON.stringify(record.id)},"status":"${acceptedStatus(record)}","signal":${signalJson},"quota":${quota},"agents":${agentsOf(record)}}`;
}

/**
 * Where the accepted signal went at that moment: into its agents' queues, or, when every agent it
 * was for is halted (its account, its source, or each agent), nowhere: `halted`, for good.
 */
function acceptedStatus(record: SignalRecord): 'queued' | 'halted' {
  const outcome = record.outcome ?? {};
  return (outcome.halted ?? 0) > 0 && agentsOf(record) === outcome.halted ? 'halted' : 'queued';
}

/** How many agents the signal was queued for: every delivery, whatever became of it since. */
function agentsOf(record: SignalRecord): number {
  let agents = 0;
  for (const count of Object.values(record.outcome ?? {})) agents += count;
  return agents;
}

function recordAnswer(
  record: SignalRecord,
  nowMillis: number,
): { status: number; headers: Record<string, string>; body: unknown } {
  if (record.status === 'accepted') {
    return {
      status: 202,
      headers: { 'content-type': ACCEPTED_CONTENT_TYPE },
      body: {
        id: record.id,
        // The answer's status says where the signal went at that moment: into its agents' queues.
        status: acceptedStatus(record),
        signal: record.signal,
        quota: record.quota && { used: record.quota.used, limit: record.quota.limit, period: record.quota.period },
        agents: agentsOf(record),
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
