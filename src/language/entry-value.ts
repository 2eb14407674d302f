/**
 * Reads an entry's value as the kind of value its parameter takes (number, text, flag), with a
 * detail naming the parameter and what to write instead when it cannot. Ranges are not checked
 * here: they depend on the parameter and sometimes on its companions.
 */
import { type DecimalReading, formatDecimal, readDecimal, readExactDecimal } from './decimal-number.js';
import { quotedExcerpt, shortened } from './quoted-excerpt.js';
import type { EntryValue } from './signal-entry.js';
import type { JsonValue } from './strict-json-reader.js';

export type ValueReading<T> = { ok: true; value: T } | { ok: false; detail: string };

export function readNumberValue(value: EntryValue, param: string, example = '20'): ValueReading<number> {
  if (value.kind === 'bare') return { ok: false, detail: `${param} needs a value, e.g. ${param}=${example}` };
  let text: string;
  let reading: DecimalReading;
  if (value.kind === 'json' && value.json.kind === 'number') {
    // The reader only keeps well-formed literals, which may have an exponent in JSON.
    text = value.json.text;
    reading = readExactDecimal(text);
  } else {
    if (value.kind === 'json') {
      if (value.json.kind === 'null')
        return { ok: false, detail: `${param} is null; give a number (like ${example}) or leave ${param} out` };
      if (value.json.kind !== 'string') {
        return {
          ok: false,
          detail: `${param} must be a number (like ${example} or "${example}"), not ${describeJson(value.json)}`,
        };
      }
      text = value.json.value.trim();
    } else {
      // A quoted value keeps its inner spaces until here; a number is trimmed as in JSON strings.
      text = value.text.trim();
    }
    if (text === '')
      return {
        ok: false,
        detail: `${param} has an empty value; give a number (e.g. ${param}=${example}) or leave ${param} out`,
      };
    reading = readDecimal(text);
  }
  if (reading.ok) return { ok: true, value: reading.value };
  const got = quotedExcerpt(text);
  switch (reading.reason) {
    case 'inexact':
      // Digits do not help a value too close to 0 to be held at all (1e-330).
      if (reading.value === 0)
        return { ok: false, detail: `${param} is too small to be a usable number (it would read as 0), got ${got}` };
      return {
        ok: false,
        detail: `${param} has more digits than can be held exactly (it would read as ${formatDecimal(reading.value)}); write at most 15 significant digits`,
      };
    case 'exponent':
      return { ok: false, detail: `${param} must be a plain decimal number without an exponent, got ${got}` };
    case 'comma':
      // Only a decimal comma can be meant (`1,5`), so the same value with a point is safe to offer.
      return {
        ok: false,
        detail: `${param} must use a point as decimal separator: if you meant ${text.replace(',', '.')}, write that, got ${got}`,
      };
    case 'grouped':
      // `39,000` may be 39000 or 39.0: offering either could move a stop a thousandfold.
      return {
        ok: false,
        detail: `${param} must be a plain number: numbers take no thousands separator, and decimals use a point, got ${got}`,
      };
    case 'too_large':
      return { ok: false, detail: `${param} is too large to be a usable number, got ${got}` };
    case 'not_decimal':
      return { ok: false, detail: `${param} must be a decimal number like ${example} or 0.5, got ${got}` };
  }
}

/** A string value, untrimmed as given (the caller trims and checks what it needs). */
export function readTextValue(value: EntryValue, param: string, example: string): ValueReading<string> {
  if (value.kind === 'bare') return { ok: false, detail: `${param} needs a value, e.g. ${param}=${example}` };
  if (value.kind === 'text') return { ok: true, value: value.text };
  if (value.json.kind === 'string') return { ok: true, value: value.json.value };
  return { ok: false, detail: `${param} must be a string like "${example}", not ${describeJson(value.json)}` };
}

/**
 * A flag: bare in text; `true` in JSON. JSON `false` reads as "not set", exactly as if the key
 * were left out (that is what the sender literally said, so it is not a guess).
 */
export function readFlagValue(value: EntryValue, param: string): ValueReading<boolean> {
  if (value.kind === 'bare') return { ok: true, value: true };
  if (value.kind === 'text') {
    return {
      ok: false,
      detail: `${param} is a flag and takes no value; write just ${param}, not ${param}=${shortened(value.text)}`,
    };
  }
  if (value.json.kind === 'boolean') return { ok: true, value: value.json.value };
  return {
    ok: false,
    detail: `${param} is a flag: give true to set it (false or leaving it out means not set), not ${describeJson(value.json)}`,
  };
}

export function describeJson(json: JsonValue): string {
  switch (json.kind) {
    case 'string':
      return `the string ${quotedExcerpt(json.value)}`;
    case 'number':
      // As written: the double could be a rounding of it (1.00000000000000000001 reads as 1).
      return `the number ${shortened(json.text)}`;
    case 'boolean':
      return String(json.value);
    case 'null':
      return 'null';
    case 'object':
      return 'an object';
    case 'array':
      return 'an array';
  }
}
