import type { Problem } from '../errors/catalog.js';
import { decideFormat } from '../ingest/body-format.js';
import { parseSignal } from '../language/parse-signal.js';
import type { NormalizedSignal } from '../language/signal.js';
import { type AdminResult, refuse } from './admin-result.js';
import { FieldReader } from './field-reader.js';

/** Signals are at most this large at the inbound endpoint, and so here. */
const MAX_CHECKED_BYTES = 16 * 1024;

export type SignalCheck =
  | { valid: true; format: 'text' | 'json'; signal: NormalizedSignal }
  | { valid: false; httpStatus: number; code: string; errors: Problem[] };

/**
 * `POST /api/admin/check`: judges a signal body exactly as the inbound endpoint would judge it
 * from a source without a secret (the same format decision and the same parser), and answers
 * the normalized signal or every problem. It stores nothing and sends nothing.
 */
export function checkSignal(body: unknown): AdminResult<SignalCheck> {
  const fields = new FieldReader(body);
  const signal = fields.has('body') ? (body as { body: unknown }).body : undefined;
  if (signal === undefined) fields.fail('body', "'body' is required: the signal as it would be posted, e.g. \"EURUSD,buy,vol=0.1\"");
  else if (typeof signal !== 'string') fields.fail('body', "'body' must be a string: the signal text or JSON exactly as it would be posted");
  const contentType = fields.string('contentType', { required: false, max: 200 });
  fields.rejectUnknown();
  if (fields.problems.length > 0 || typeof signal !== 'string') return refuse(...fields.problems);

  const bytes = Buffer.from(signal, 'utf8');
  if (bytes.length > MAX_CHECKED_BYTES) {
    return judged(413, [{ code: 'PAYLOAD_TOO_LARGE', detail: `the body is larger than ${MAX_CHECKED_BYTES} bytes; send one signal per request` }]);
  }
  const format = decideFormat(contentType ?? undefined, undefined, bytes);
  if (!format.ok) return judged(415, [{ code: 'UNSUPPORTED_MEDIA_TYPE', detail: format.detail, param: format.param }]);
  const parsed = parseSignal(signal, format.format);
  if (!parsed.ok) return judged(parsed.problems[0]?.code === 'PARSE_ERROR' ? 400 : 422, parsed.problems);
  return { ok: true, value: { valid: true, format: format.format, signal: parsed.signal } };
}

function judged(httpStatus: number, errors: Problem[]): AdminResult<SignalCheck> {
  return { ok: true, value: { valid: false, httpStatus, code: errors[0]!.code, errors } };
}
