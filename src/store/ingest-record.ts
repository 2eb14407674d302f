import type { Problem } from '../errors/catalog.js';
import type { NormalizedSignal } from '../language/index.js';
import type { Outcome, SignalRecord, SignalStatus, Usage } from './records.js';
import type { IngestRequest } from './store.js';
import { isoTime } from './iso-time.js';

/** What the verdict (and the quota charge) decide about a new log entry. */
export interface LogVerdict {
  status: SignalStatus;
  httpStatus: number;
  code: string | null;
  detail: string | null;
  param: string | null;
  errors: Problem[] | null;
  signal: NormalizedSignal | null;
  quota: Usage | null;
}

export function acceptedVerdict(signal: NormalizedSignal, quota: Usage): LogVerdict {
  return { status: 'accepted', httpStatus: 202, code: null, detail: null, param: null, errors: null, signal, quota };
}

/** A refusal: code, detail and param of the first problem; `errors` only when there are several. */
export function rejectedVerdict(httpStatus: number, problems: Problem[]): LogVerdict {
  const first = problems[0];
  return {
    status: 'rejected',
    httpStatus,
    code: first?.code ?? null,
    detail: first?.detail ?? null,
    param: first?.param ?? null,
    errors: problems.length > 1 ? problems : null,
    signal: null,
    quota: null,
  };
}

/**
 * A repeat of `original` within the source's duplicate window: answered 202 as the original,
 * neither charged nor delivered.
 */
export function duplicateVerdict(signal: NormalizedSignal | null): LogVerdict {
  return {
    status: 'duplicate',
    httpStatus: 202,
    code: null,
    detail: null,
    param: null,
    errors: null,
    signal,
    quota: null,
  };
}

/**
 * The log entry a new request becomes. `outcome` is what was queued: one `queued` delivery per
 * agent for an accepted signal (`halted` for an agent whose account, source or self is halted;
 * `{}` for none), null for any other.
 */
export function ingestRecord(
  request: IngestRequest,
  verdict: LogVerdict,
  extra: { agents?: number; halted?: number; duplicateOf?: string } = {},
): SignalRecord {
  return {
    id: request.id,
    sourceId: request.sourceId,
    accountId: request.accountId,
    receivedAt: isoTime(request.receivedAt),
    status: verdict.status,
    httpStatus: verdict.httpStatus,
    code: verdict.code,
    detail: verdict.detail,
    param: verdict.param,
    errors: verdict.errors,
    contentType: request.contentType,
    rawBody: request.rawBody,
    signal: verdict.signal,
    idempotencyKey: request.idempotencyKey,
    quota: verdict.quota,
    duplicateOf: extra.duplicateOf ?? null,
    outcome: verdict.status === 'accepted' ? queuedOutcome(extra.agents ?? 0, extra.halted ?? 0) : null,
  };
}

/** `agents` deliveries, of which `halted` were halted at the door and the rest queued. */
function queuedOutcome(agents: number, halted: number): Outcome {
  const outcome: Outcome = {};
  if (halted > 0) outcome.halted = halted;
  if (agents > halted) outcome.queued = agents - halted;
  return outcome;
}
