import { ErrorCode, type Problem } from '../errors/catalog.js';
import { judgeBody } from '../inbound/judge-body.js';
import { MAX_BODY_BYTES } from '../inbound/receive-signal.js';
import {
  readTradingViewTemplate,
  type NormalizedSignal,
  type TemplatePlaceholder,
  type TemplateRendering,
} from '../language/index.js';
import { type AdminResult, refuse } from './admin-result.js';
import { FieldReader } from './field-reader.js';
import { objectSchema } from '../openapi/index.js';

export type SignalCheck = BodyCheck & { template?: TemplateCheck };

type BodyCheck =
  | { valid: true; format: 'text' | 'json'; signal: NormalizedSignal }
  | { valid: false; httpStatus: number; code: string; errors: Problem[] };

/**
 * A TradingView alert message with placeholders: what each becomes, the warnings, and each
 * message it can turn into (the sample values, then each value of the placeholder that picks
 * the action) judged as the endpoint would judge it.
 */
export interface TemplateCheck {
  placeholders: readonly TemplatePlaceholder[];
  warnings: readonly string[];
  checked: (TemplateRendering & BodyCheck)[];
}

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
 * answers the normalized signal or every problem. A TradingView alert message with `{{...}}`
 * placeholders is checked with sample values (see checkMessage). It stores nothing and sends nothing.
 */
export function checkSignal(body: unknown): AdminResult<SignalCheck> {
  const fields = new FieldReader(body, CHECK_BODY);
  const signal = fields.has('body') ? (body as { body: unknown }).body : undefined;
  if (signal === undefined)
    fields.fail('body', '\'body\' is required: the signal as it would be posted, e.g. "EURUSD,buy,vol=0.1"');
  else if (typeof signal !== 'string')
    fields.fail('body', "'body' must be a string: the signal text or JSON exactly as it would be posted");
  const contentType = fields.string('contentType');
  fields.rejectUnknown();
  if (fields.problems.length > 0 || typeof signal !== 'string') return refuse(...fields.problems);

  const bytes = Buffer.from(signal, 'utf8');
  if (bytes.length > MAX_BODY_BYTES) {
    return judged(413, [
      {
        code: ErrorCode.PAYLOAD_TOO_LARGE,
        detail: `the body is larger than ${MAX_BODY_BYTES} bytes; send one signal per request`,
      },
    ]);
  }
  // Decoded from the bytes, as the endpoint does (a lone surrogate becomes U+FFFD there too).
  return { ok: true, value: checkMessage(contentType ?? undefined, bytes.toString('utf8')) };
}

/**
 * A message judged as the endpoint would judge it; one with TradingView placeholders is judged
 * as each message it can turn into, and the answer is that of the first one refused (or of the
 * sample values when none is), with the template's reading beside it.
 */
export function checkMessage(contentType: string | undefined, message: string): SignalCheck {
  const template = readTradingViewTemplate(message);
  if (template === null) return checkBody(contentType, message);
  const checked = template.renderings.map((rendering) => ({ ...rendering, ...checkBody(contentType, rendering.body) }));
  const answer = checked.find((c) => !c.valid) ?? checked[0]!;
  const { values: _values, body: _body, ...verdict } = answer;
  return { ...verdict, template: { placeholders: template.placeholders, warnings: template.warnings, checked } };
}

function checkBody(contentType: string | undefined, text: string): BodyCheck {
  const verdict = judgeBody(contentType, undefined, Buffer.from(text, 'utf8'), text);
  if (!verdict.ok)
    return { valid: false, httpStatus: verdict.httpStatus, code: verdict.problems[0]!.code, errors: verdict.problems };
  return { valid: true, format: verdict.format, signal: verdict.signal };
}

function judged(httpStatus: number, errors: Problem[]): AdminResult<SignalCheck> {
  return { ok: true, value: { valid: false, httpStatus, code: errors[0]!.code, errors } };
}
