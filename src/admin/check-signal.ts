import { ErrorCode, type Problem } from '../errors/catalog.js';
import { judgeBody } from '../inbound/judge-body.js';
import { MAX_BODY_BYTES } from '../inbound/receive-signal.js';
import type { NormalizedSignal } from '../language/index.js';
import { type AdminResult, refuse } from './admin-result.js';
import { FieldReader } from './field-reader.js';
import { objectSchema } from '../openapi/index.js';

export type SignalCheck =
  | { valid: true; format: 'text' | 'json'; signal: NormalizedSignal }
  | { valid: false; httpStatus: number; code: string; errors: Problem[] };

/** The body of `POST /api/admin/check`, as published and as read. */
export const CHECK_BODY = objectSchema(
  {
    body: { type: 'string', description: 'the signal exactly as it would be posted', examples: ['EURUSD,buy,vol=0.1'] },
    contentType: { type: 'string', maxLength: 200, description: 'the Content-Type it would be posted with' },
  },
  ['body'],
);

/**
 * `POST /api/admin/check`: judges a signal body exactly as the inbound endpoint would judge it
 * from an active source without a secret (`judgeBody`, which the endpoint calls too), and
 * answers the normalized signal or every problem. It stores nothing and sends nothing.
 */
export function checkSignal(body: unknown): AdminResult<SignalCheck> {
  const fields = new FieldReader(body, CHECK_BODY);
  const signal = fields.has('body') ? (body as { body: unknown }).body : undefined;
  if (signal === undefined) fields.fail('body', "'body' is required: the signal as it would be posted, e.g. \"EURUSD,buy,vol=0.1\"");
  else if (typeof signal !== 'string') fields.fail('body', "'body' must be a string: the signal text or JSON exactly as it would be posted");
  const contentType = fields.string('contentType');
  fields.rejectUnknown();
  if (fields.problems.length > 0 || typeof signal !== 'string') return refuse(...fields.problems);

  const bytes = Buffer.from(signal, 'utf8');
  if (bytes.length > MAX_BODY_BYTES) {
    return judged(413, [{ code: ErrorCode.PAYLOAD_TOO_LARGE, detail: `the body is larger than ${MAX_BODY_BYTES} bytes; send one signal per request` }]);
  }
  // Decoded from the bytes, as the endpoint does (a lone surrogate becomes U+FFFD there too).
  const verdict = judgeBody(contentType ?? undefined, undefined, bytes, bytes.toString('utf8'));
  if (!verdict.ok) return judged(verdict.httpStatus, verdict.problems);
  return { ok: true, value: { valid: true, format: verdict.format, signal: verdict.signal } };
}

function judged(httpStatus: number, errors: Problem[]): AdminResult<SignalCheck> {
  return { ok: true, value: { valid: false, httpStatus, code: errors[0]!.code, errors } };
}
