import { ErrorCode, type Problem } from '../errors/catalog.js';
import { type NormalizedSignal, parseSignal, type SignalFormat } from '../language/index.js';
import { decideFormat } from './body-format.js';

export type BodyVerdict =
  { ok: true; format: SignalFormat; signal: NormalizedSignal } | { ok: false; httpStatus: number; problems: Problem[] };

/**
 * What a signal body amounts to (checks 7 and 8): its format from the Content-Type, then the
 * normalized signal or every problem. The inbound endpoint and the dashboard's checker both ask
 * this, so the checker can never judge a body otherwise than the endpoint would. `text` is the
 * body decoded as strict UTF-8, or null when it is not UTF-8.
 */
export function judgeBody(
  contentType: string | undefined,
  contentEncoding: string | undefined,
  body: Buffer,
  text: string | null,
): BodyVerdict {
  const format = decideFormat(contentType, contentEncoding, body);
  if (!format.ok)
    return {
      ok: false,
      httpStatus: 415,
      problems: [{ code: ErrorCode.UNSUPPORTED_MEDIA_TYPE, detail: format.detail, param: format.param }],
    };
  if (text === null) {
    return {
      ok: false,
      httpStatus: 400,
      problems: [{ code: ErrorCode.PARSE_ERROR, detail: 'the body is not valid UTF-8; send the signal as UTF-8 text' }],
    };
  }
  const parsed = parseSignal(text, format.format);
  if (!parsed.ok)
    return {
      ok: false,
      httpStatus: parsed.problems[0]?.code === ErrorCode.PARSE_ERROR ? 400 : 422,
      problems: parsed.problems,
    };
  return { ok: true, format: format.format, signal: parsed.signal };
}
