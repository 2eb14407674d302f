/**
 * Numbers in signals are plain decimals: an optional sign, digits, an optional fraction.
 * No exponent (`1e5` in a lot size is far more likely a template bug than intent), no hex,
 * no `Infinity`/`NaN`, no comma as decimal separator.
 */
const PLAIN_DECIMAL = /^[+-]?(?:\d+(?:\.\d+)?|\.\d+)$/;

/** A decimal with an optional exponent: JSON number literals, and what String(number) writes. */
const SCIENTIFIC_DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

export type DecimalReading =
  | { ok: true; value: number }
  /**
   * `comma`: a comma that can only be a decimal comma (`1,5`); `grouped`: one that may as well
   * separate thousands (`39,000`, `1,000,000.5`), so what was meant cannot be told.
   */
  | { ok: false; reason: 'not_decimal' | 'exponent' | 'comma' | 'grouped' | 'too_large' }
  /** The digits do not fit a double: `value` is what they would have been rounded to. */
  | { ok: false; reason: 'inexact'; value: number };

export function readDecimal(text: string): DecimalReading {
  if (!PLAIN_DECIMAL.test(text)) {
    if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)[eE][+-]?\d+$/.test(text)) return { ok: false, reason: 'exponent' };
    if (commaMayGroupThousands(text)) return { ok: false, reason: 'grouped' };
    if (/^[+-]?\d+,\d+$/.test(text)) return { ok: false, reason: 'comma' };
    return { ok: false, reason: 'not_decimal' };
  }
  return readExactDecimal(text);
}

/**
 * Whether the commas in `text` could be thousands separators: groups of three digits after a
 * whole part that does not start with 0 (`39,000`, `1,000,000.50`). Then `39,000` may mean
 * 39000 or 39.0, and no hint may propose either.
 */
export function commaMayGroupThousands(text: string): boolean {
  return /^[+-]?[1-9]\d*(?:,\d{3})+(?:\.\d+)?$/.test(text);
}

/**
 * The number a well-formed decimal denotes (a plain decimal, or a JSON number literal, which may
 * have an exponent), when a double holds exactly that value. Rounding silently would move
 * limits (100.0000000000000001 passing "at most 100") and quote numbers never sent, so a
 * number is taken only when its written value equals that of the double's shortest digits.
 */
export function readExactDecimal(text: string): DecimalReading {
  const value = Number(text);
  // Fifteen significant digits or fewer always come back from a double as the same value (its
  // 15.95 decimal digits of precision), so the digit by digit comparison below can only agree:
  // most numbers in signals take this path, which costs no regular expression or allocation.
  if (text.length <= MAX_ALWAYS_EXACT_LENGTH && hasNoExponent(text) && Number.isFinite(value))
    return { ok: true, value: value === 0 ? 0 : value };
  if (!Number.isFinite(value)) return { ok: false, reason: 'too_large' };
  // -0 and 0 are the same amount; keep one of them so equal signals compare equal.
  const amount = value === 0 ? 0 : value;
  if (!sameDecimalValue(text, String(amount))) return { ok: false, reason: 'inexact', value: amount };
  return { ok: true, value: amount };
}

/** A decimal this long has at most 15 digits, whatever its sign and point. */
const MAX_ALWAYS_EXACT_LENGTH = 15;

function hasNoExponent(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code === 0x65 || code === 0x45) return false;
  }
  return true;
}

/** Whether two decimals (exponents allowed) denote the same value, compared digit by digit, not as doubles. */
function sameDecimalValue(a: string, b: string): boolean {
  const first = exactForm(a);
  const second = exactForm(b);
  return first.digits === second.digits && first.exponent === second.exponent && first.negative === second.negative;
}

/**
 * A decimal as significant digits × 10^exponent, without leading or trailing zeros, so equal
 * values have equal forms (zero is no digits, unsigned).
 */
function exactForm(text: string): { negative: boolean; digits: string; exponent: number } {
  const [, sign = '', whole = '', fraction = '', exponentText = '0'] = SCIENTIFIC_DECIMAL.exec(text) ?? [];
  const allDigits = (whole + fraction).replace(/^0+/, '');
  const digits = allDigits.replace(/0+$/, '');
  if (digits === '') return { negative: false, digits: '', exponent: 0 };
  const exponent = Number(exponentText) - fraction.length + (allDigits.length - digits.length);
  return { negative: sign === '-', digits, exponent };
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
