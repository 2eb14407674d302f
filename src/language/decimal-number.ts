/**
 * Numbers in signals are plain decimals: an optional sign, digits, an optional fraction.
 * No exponent (`1e5` in a lot size is far more likely a template bug than intent), no hex,
 * no `Infinity`/`NaN`, no comma as decimal separator.
 */
const PLAIN_DECIMAL = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$/;

export type DecimalReading =
  | { ok: true; value: number }
  | { ok: false; reason: 'not_decimal' | 'exponent' | 'comma' | 'too_large' };

export function readDecimal(text: string): DecimalReading {
  if (!PLAIN_DECIMAL.test(text)) {
    if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)[eE][+-]?\d+$/.test(text)) return { ok: false, reason: 'exponent' };
    if (/^[+-]?\d+,\d+$/.test(text)) return { ok: false, reason: 'comma' };
    return { ok: false, reason: 'not_decimal' };
  }
  const value = Number(text);
  if (!Number.isFinite(value)) return { ok: false, reason: 'too_large' };
  // -0 and 0 are the same amount; keep one of them so equal signals compare equal.
  return { ok: true, value: value === 0 ? 0 : value };
}

/**
 * The plain decimal that reads back as exactly `value`: JavaScript's shortest round-trip
 * digits, with any exponent written out (1e-7 → 0.0000001), so the text form never needs one.
 */
export function formatDecimal(value: number): string {
  if (!Number.isFinite(value)) throw new RangeError(`cannot write ${value} as a decimal`);
  const shortest = String(value === 0 ? 0 : value);
  const match = /^(-?)(\d)(?:\.(\d+))?e([+-]\d+)$/.exec(shortest);
  if (match === null) return shortest;
  const [, sign = '', lead = '', fraction = '', exponentText = '0'] = match;
  const digits = lead + fraction;
  const pointAt = 1 + Number(exponentText);
  if (pointAt <= 0) return `${sign}0.${'0'.repeat(-pointAt)}${digits}`;
  if (pointAt >= digits.length) return `${sign}${digits}${'0'.repeat(pointAt - digits.length)}`;
  return `${sign}${digits.slice(0, pointAt)}.${digits.slice(pointAt)}`;
}
