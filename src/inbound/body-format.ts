import type { SignalFormat } from '../language/index.js';

export type FormatDecision =
  { ok: true; format: SignalFormat } | { ok: false; detail: string; param: 'Content-Type' | 'Content-Encoding' };

const JSON_FORMAT: FormatDecision = Object.freeze({ ok: true, format: 'json' });
const TEXT_FORMAT: FormatDecision = Object.freeze({ ok: true, format: 'text' });
const EXACT_TYPES = new Map<string, FormatDecision>([
  ['application/json', JSON_FORMAT],
  ['application/json; charset=utf-8', JSON_FORMAT],
  ['text/plain', TEXT_FORMAT],
  ['text/plain; charset=utf-8', TEXT_FORMAT],
]);

/**
 * Picks the signal format from the Content-Type: JSON types are JSON, text/plain
 * is text, and a missing type or the form type `curl -d` sends is decided by the first
 * non-blank byte. A charset other than UTF-8 is refused rather than misread.
 */
export function decideFormat(
  contentType: string | undefined,
  contentEncoding: string | undefined,
  body: Buffer,
): FormatDecision {
  // A compressed body would be read as bytes that are not UTF-8: say what is wrong instead.
  const encoding = contentEncoding?.trim().toLowerCase();
  if (encoding !== undefined && encoding !== '' && encoding !== 'identity') {
    return {
      ok: false,
      param: 'Content-Encoding',
      detail: `Content-Encoding '${encoding}' is not supported; send the body uncompressed (without Content-Encoding)`,
    };
  }
  if (contentType === undefined || contentType.trim() === '') return { ok: true, format: sniff(body) };
  // What nearly every sender writes, decided without taking the header apart.
  const exact = EXACT_TYPES.get(contentType);
  if (exact !== undefined) return exact;
  const [rawType = '', ...params] = contentType.split(';');
  const type = rawType.trim().toLowerCase();
  const charset = params
    .map((p) => p.trim().toLowerCase())
    .find((p) => p.startsWith('charset='))
    ?.slice('charset='.length)
    .replace(/^"|"$/g, '');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8' && charset !== 'us-ascii') {
    return {
      ok: false,
      param: 'Content-Type',
      detail: `charset '${charset}' is not supported; send the body as UTF-8 (Content-Type: ${type}; charset=utf-8)`,
    };
  }
  if (type === 'application/json' || /^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+\+json$/.test(type)) {
    return { ok: true, format: 'json' };
  }
  if (type === 'text/plain') return { ok: true, format: 'text' };
  if (type === 'application/x-www-form-urlencoded') return { ok: true, format: sniff(body) };
  return {
    ok: false,
    param: 'Content-Type',
    detail: `Content-Type '${type}' is not supported; send the signal as text/plain (EURUSD,buy,...) or application/json`,
  };
}

function sniff(body: Buffer): SignalFormat {
  for (const byte of body) {
    // Skip the UTF-8 byte order mark and ASCII white space.
    if (
      byte === 0x20 ||
      byte === 0x09 ||
      byte === 0x0a ||
      byte === 0x0d ||
      byte === 0xef ||
      byte === 0xbb ||
      byte === 0xbf
    ) {
      continue;
    }
    return byte === 0x7b ? 'json' : 'text';
  }
  return 'text';
}
