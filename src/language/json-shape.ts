import { MAX_JSON_NESTING } from './strict-json-reader.js';

/** The most values one JSON body may hold: each list element and each object member counts once. */
export const MAX_JSON_VALUES = 10_000;

/** What makes a JSON text too big to parse: nested too deep, or holding too many values. */
export interface JsonShapeExcess {
  kind: 'depth' | 'values';
  /** The top-level member it is in, when the text is an object and the key could be read. */
  key: string | null;
}

/** The longest top-level key kept for naming where the excess is. */
const MAX_KEY_CHARS = 100;

/**
 * Whether the JSON `text` nests objects and lists more than `MAX_JSON_NESTING` levels deep (the
 * text's own object or list is level 1) or holds more than `MAX_JSON_VALUES` values: found in
 * one pass over the characters, without building anything, so it can run before `JSON.parse`.
 * A value nested thousands deep parses, but whatever later walks it recursively (`JSON.stringify`
 * on its way to the store) overflows the stack. It checks no syntax: text that is not JSON is
 * left for the parser to refuse.
 */
export function jsonShapeExcess(text: string): JsonShapeExcess | null {
  let depth = 0;
  let values = 0;
  /** Just after an opening bracket: the next character says whether the container is empty. */
  let opened = false;
  /** At depth 1 in an object, where the next string is a key. */
  let keyNext = false;
  let topIsObject = false;
  let key: string | null = null;
  for (let pos = 0; pos < text.length; pos++) {
    const code = text.charCodeAt(pos);
    // space, tab, line feed, carriage return
    if (code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d) continue;
    if (opened) {
      opened = false;
      if (code !== 0x5d && code !== 0x7d) values++; // the container's first value
    }
    if (code === 0x22) {
      const end = stringEnd(text, pos);
      if (keyNext) {
        key = end - pos - 1 <= MAX_KEY_CHARS ? readKey(text.slice(pos, end + 1)) : null;
        keyNext = false;
      }
      pos = end;
    } else if (code === 0x5b || code === 0x7b) {
      // [ {
      depth++;
      if (depth > MAX_JSON_NESTING) return { kind: 'depth', key: topIsObject ? key : null };
      if (depth === 1) {
        topIsObject = code === 0x7b;
        keyNext = topIsObject;
      }
      opened = true;
    } else if (code === 0x5d || code === 0x7d) {
      // ] }
      if (depth > 0) depth--;
    } else if (code === 0x2c) {
      // ,
      values++;
      if (depth === 1 && topIsObject) keyNext = true;
    }
    if (values > MAX_JSON_VALUES) return { kind: 'values', key: topIsObject && depth > 1 ? key : null };
  }
  return null;
}

/** The position of the quote closing the string that opens at `start` (the text's end if none does). */
function stringEnd(text: string, start: number): number {
  for (let pos = start + 1; pos < text.length; pos++) {
    const code = text.charCodeAt(pos);
    if (code === 0x5c)
      pos++; // \ escapes the next character
    else if (code === 0x22) return pos;
  }
  return text.length;
}

function readKey(literal: string): string | null {
  try {
    const key: unknown = JSON.parse(literal);
    return typeof key === 'string' ? key : null;
  } catch {
    return null;
  }
}
