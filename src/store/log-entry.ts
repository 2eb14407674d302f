import type { Problem } from '../errors/catalog.js';
import type { NormalizedSignal } from '../language/index.js';
import type { DeliveryStatus, Outcome, SignalRecord, SignalStatus } from './records.js';
import { signalStatusOf } from './stored-signal-status.js';

/**
 * A signal log entry as a page of the log reads it: a `SignalRecord` whose JSON columns, the
 * normalized signal and a refusal's problems, are still the text stored. The normalized
 * signal's is `JSON.stringify`'s, written by the ingest alone on either store (the inbound
 * answer and PostgreSQL's symbol column rely on it too), so an answer carries it as it is:
 * parsing it and writing it again was about a tenth of a page's time
 * (docs/decisions/0010-admin-page-encoding.md).
 */
export type LogEntry = Omit<SignalRecord, 'errors' | 'signal'> & {
  /** The problems' JSON text, as stored (written again for an answer: not every writer of it wrote it compactly). */
  errorsJson: string | null;
  /** The normalized signal's JSON text, as stored. */
  signalJson: string | null;
};

/**
 * The log entry of a row read as an array in the order both stores' `LOG_ENTRY_COLUMNS` give:
 * id, source, account, received at, status, HTTP status, code, detail, param, errors, content
 * type, raw body, normalized signal, idempotency key, quota period, used, limit, duplicate of.
 * The received time and the raw body come as each store gives them, so the store passes them
 * already as text; its outcome is counted from the deliveries by the reader that has them.
 */
export function logEntryOfColumns(row: unknown[], receivedAt: string, rawBody: string): LogEntry {
  const duplicateOf = row[17] as string | null;
  const period = row[14] as string | null;
  const used = row[15] as number | null;
  const limit = row[16] as number | null;
  return {
    id: row[0] as string,
    sourceId: row[1] as string,
    accountId: row[2] as string,
    receivedAt,
    status: signalStatusOf(row[4] as string, duplicateOf),
    httpStatus: row[5] as number,
    code: row[6] as string | null,
    detail: row[7] as string | null,
    param: row[8] as string | null,
    errorsJson: row[9] as string | null,
    contentType: row[10] as string | null,
    rawBody,
    signalJson: row[12] as string | null,
    idempotencyKey: row[13] as string | null,
    quota: period === null || used === null || limit === null ? null : { period, used, limit },
    duplicateOf,
    outcome: null,
  };
}

/** The entry as a record, its JSON columns parsed. */
export function signalRecordOf(entry: LogEntry): SignalRecord {
  return {
    id: entry.id,
    sourceId: entry.sourceId,
    accountId: entry.accountId,
    receivedAt: entry.receivedAt,
    status: entry.status,
    httpStatus: entry.httpStatus,
    code: entry.code,
    detail: entry.detail,
    param: entry.param,
    errors: entry.errorsJson === null ? null : (JSON.parse(entry.errorsJson) as Problem[]),
    contentType: entry.contentType,
    rawBody: entry.rawBody,
    signal: entry.signalJson === null ? null : (JSON.parse(entry.signalJson) as NormalizedSignal),
    idempotencyKey: entry.idempotencyKey,
    quota: entry.quota,
    duplicateOf: entry.duplicateOf,
    outcome: entry.outcome,
  };
}

const json = JSON.stringify;
/** A value that is often null: no call for a null (a seventh of the writing of a page of 500). */
const nullable = (value: string | null): string => (value === null ? 'null' : json(value));
const STATUS_JSON: Record<SignalStatus, string> = {
  accepted: '"accepted"',
  rejected: '"rejected"',
  duplicate: '"duplicate"',
};

/**
 * `JSON.stringify(signalRecordOf(entry))`, byte for byte (the same keys in the same order,
 * every value but the normalized signal written by `JSON.stringify` itself), without parsing
 * the normalized signal.
 */
export function logEntryJson(entry: LogEntry): string {
  const { quota } = entry;
  return (
    `{"id":${json(entry.id)},"sourceId":${json(entry.sourceId)},"accountId":${json(entry.accountId)},` +
    `"receivedAt":${json(entry.receivedAt)},"status":${STATUS_JSON[entry.status]},"httpStatus":${json(entry.httpStatus)},` +
    `"code":${nullable(entry.code)},"detail":${nullable(entry.detail)},"param":${nullable(entry.param)},` +
    `"errors":${entry.errorsJson === null ? 'null' : json(JSON.parse(entry.errorsJson))},"contentType":${nullable(entry.contentType)},` +
    `"rawBody":${json(entry.rawBody)},"signal":${entry.signalJson ?? 'null'},"idempotencyKey":${nullable(entry.idempotencyKey)},` +
    `"quota":${quota === null ? 'null' : `{"period":${json(quota.period)},"used":${json(quota.used)},"limit":${json(quota.limit)}}`},` +
    `"duplicateOf":${nullable(entry.duplicateOf)},"outcome":${entry.outcome === null ? 'null' : json(entry.outcome)}}`
  );
}

/** Delivery statuses in the order an outcome lists them: alphabetical, as a count grouped by signal and status answers them. */
const OUTCOME_ORDER: readonly DeliveryStatus[] = [
  'delivered',
  'executed',
  'expired',
  'failed',
  'halted',
  'queued',
  'rejected',
];

/**
 * Counts deliveries' statuses into outcomes, per signal: `add` each delivery (or a count of
 * them), then `outcome` an accepted signal's (`{}` when it had none).
 */
export class OutcomeCounts {
  private readonly counts = new Map<string, Map<string, number>>();

  add(signalId: string, status: string, n = 1): void {
    let counts = this.counts.get(signalId);
    if (counts === undefined) this.counts.set(signalId, (counts = new Map()));
    counts.set(status, (counts.get(status) ?? 0) + n);
  }

  outcome(signalId: string): Outcome {
    const outcome: Outcome = {};
    const counts = this.counts.get(signalId);
    if (counts === undefined) return outcome;
    for (const status of OUTCOME_ORDER) {
      const n = counts.get(status);
      if (n !== undefined) outcome[status] = n;
    }
    return outcome;
  }
}
