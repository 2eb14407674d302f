import { quotedExcerpt } from './quoted-excerpt.js';

/**
 * Reads a JSON body that must be one object, keeping every top-level member in body order,
 * duplicates included. `JSON.parse` silently keeps the last of two equal keys, which would let
 * `{"sl_pips":20,"sl_pips":2}` through as a 2-pip stop; the signal rules need to see both.
 * Nested values are checked for syntax but only their kind is kept: no signal parameter takes
 * an object or an array, so their content never matters.
 */
export type JsonValue =
  | { kind: 'string'; value: string }
  | { kind: 'number'; value: number }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  | { kind: 'object' }
  | { kind: 'array' };

export interface JsonMember {
  key: string;
  value: JsonValue;
}

export type JsonObjectReading = { ok: true; members: JsonMember[] } | { ok: false; detail: string };

/** Deeper nesting is refused rather than risking the call stack on hostile input. */
export const MAX_JSON_NESTING = 64;

class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(message);
  }
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = Object.freeze({
  '"': '"',
  '\\': '\\',
  '/': '/',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
});

const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

export function readJsonObject(text: string): JsonObjectReading {
  let pos = 0;

  const fail = (message: string, at = pos): never => {
    throw new JsonSyntaxError(message, at);
  };
  const skipWhitespace = (): void => {
    while (pos < text.length && ' \t\n\r'.includes(text[pos]!)) pos += 1;
  };
  const describeHere = (): string => (pos >= text.length ? 'the end of the body' : quotedExcerpt(text[pos]!));
  const expect = (character: string, what: string): void => {
    skipWhitespace();
    if (text[pos] !== character) fail(`expected ${what} but found ${describeHere()}`);
    pos += 1;
  };

  const readString = (): string => {
    // Called with pos on the opening quote.
    const start = pos;
    pos += 1;
    let result = '';
    let runStart = pos;
    while (true) {
      if (pos >= text.length) fail('unterminated string', start);
      const code = text.charCodeAt(pos);
      if (code === 0x22) {
        result += text.slice(runStart, pos);
        pos += 1;
        return result;
      }
      if (code < 0x20) fail('control character inside a string; escape it (for example \\n)');
      if (code === 0x5c) {
        result += text.slice(runStart, pos);
        const escape = text[pos + 1];
        if (escape !== undefined && Object.hasOwn(SIMPLE_ESCAPES, escape)) {
          result += SIMPLE_ESCAPES[escape];
          pos += 2;
        } else if (escape === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(pos + 2, pos + 6))) {
          result += String.fromCharCode(parseInt(text.slice(pos + 2, pos + 6), 16));
          pos += 6;
        } else {
          fail('invalid escape sequence in a string');
        }
        runStart = pos;
        continue;
      }
      pos += 1;
    }
  };

  const readValue = (depth: number): JsonValue => {
    skipWhitespace();
    const character = text[pos];
    if (character === '"') return { kind: 'string', value: readString() };
    if (character === '{') {
      skipComposite('{', '}', depth + 1);
      return { kind: 'object' };
    }
    if (character === '[') {
      skipComposite('[', ']', depth + 1);
      return { kind: 'array' };
    }
    for (const [word, value] of [
      ['true', { kind: 'boolean', value: true }],
      ['false', { kind: 'boolean', value: false }],
      ['null', { kind: 'null' }],
    ] as const) {
      if (text.startsWith(word, pos)) {
        pos += word.length;
        return value;
      }
    }
    NUMBER.lastIndex = pos;
    const number = NUMBER.exec(text);
    if (number !== null) {
      pos += number[0].length;
      return { kind: 'number', value: Number(number[0]) };
    }
    return fail(`expected a value but found ${describeHere()}`);
  };

  /** A nested object or array: syntax checked, content dropped. */
  const skipComposite = (open: '{' | '[', close: '}' | ']', depth: number): void => {
    if (depth > MAX_JSON_NESTING) fail(`nesting deeper than ${MAX_JSON_NESTING} levels`);
    pos += 1;
    skipWhitespace();
    if (text[pos] === close) {
      pos += 1;
      return;
    }
    while (true) {
      if (open === '{') {
        skipWhitespace();
        if (text[pos] !== '"') fail(`expected a quoted key but found ${describeHere()}`);
        readString();
        expect(':', "':'");
      }
      readValue(depth);
      skipWhitespace();
      if (text[pos] === ',') {
        pos += 1;
        continue;
      }
      if (text[pos] === close) {
        pos += 1;
        return;
      }
      fail(`expected ',' or '${close}' but found ${describeHere()}`);
    }
  };

  try {
    skipWhitespace();
    if (pos >= text.length) return { ok: false, detail: 'the body is empty; send one JSON object like {"symbol":"EURUSD","action":"buy"}' };
    if (text[pos] !== '{') {
      const found = readValue(0);
      skipWhitespace();
      const what = pos < text.length ? 'something that is not JSON' : `a JSON ${found.kind}`;
      return { ok: false, detail: `the body must be one JSON object like {"symbol":"EURUSD","action":"buy"}, not ${what}` };
    }
    pos += 1;
    const members: JsonMember[] = [];
    skipWhitespace();
    if (text[pos] === '}') {
      pos += 1;
    } else {
      while (true) {
        skipWhitespace();
        if (text[pos] !== '"') fail(`expected a quoted key but found ${describeHere()}`);
        const key = readString();
        expect(':', "':'");
        members.push({ key, value: readValue(1) });
        skipWhitespace();
        if (text[pos] === ',') {
          pos += 1;
          continue;
        }
        if (text[pos] === '}') {
          pos += 1;
          break;
        }
        fail(`expected ',' or '}' but found ${describeHere()}`);
      }
    }
    skipWhitespace();
    if (pos < text.length) fail('unexpected text after the JSON object; send exactly one object per request');
    return { ok: true, members };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { ok: false, detail: `malformed JSON at ${lineAndColumn(text, error.at)}: ${error.message}` };
  }
}

function lineAndColumn(text: string, at: number): string {
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - (before.lastIndexOf('\n') + 1) + 1;
  return `line ${line}, column ${column}`;
}
