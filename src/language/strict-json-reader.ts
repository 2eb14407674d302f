import { quotedExcerpt } from './quoted-excerpt.js';

/**
 * Reads a JSON body that must be one object, keeping every top-level member in body order,
 * duplicates included. `JSON.parse` silently keeps the last of two equal keys, which would let
 * `{"sl_pips":20,"sl_pips":2}` through as a 2-pip stop; the signal rules need to see both.
 * Nested values are checked for syntax but only their kind is kept, and an object's text: no
 * signal parameter takes an object or an array, so their content never matters here.
 */
export type JsonValue =
  | { kind: 'string'; value: string }
  /** `text` is the literal as written, so its digits can be checked, not only the double they round to. */
  | { kind: 'number'; value: number; text: string }
  | { kind: 'boolean'; value: boolean }
  | { kind: 'null' }
  /** `text` is the object as written, for a caller that reads it in turn. */
  | { kind: 'object'; text: string }
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

const HEX4 = /^[0-9a-fA-F]{4}$/;

/** The literal words; their values are shared, since nothing downstream changes a JsonValue. */
const LITERALS: readonly (readonly [string, JsonValue])[] = [
  ['true', { kind: 'boolean', value: true }],
  ['false', { kind: 'boolean', value: false }],
  ['null', { kind: 'null' }],
];
const ARRAY_VALUE: JsonValue = { kind: 'array' };

export function readJsonObject(text: string): JsonObjectReading {
  const cursor = new JsonCursor(text);
  try {
    cursor.skipWhitespace();
    if (cursor.atEnd())
      return { ok: false, detail: 'the body is empty; send one JSON object like {"symbol":"EURUSD","action":"buy"}' };
    if (!cursor.at('{')) {
      const found = cursor.readValue(0);
      cursor.skipWhitespace();
      const what = cursor.atEnd() ? `a JSON ${found.kind}` : 'something that is not JSON';
      return {
        ok: false,
        detail: `the body must be one JSON object like {"symbol":"EURUSD","action":"buy"}, not ${what}`,
      };
    }
    cursor.pos += 1;
    const members: JsonMember[] = [];
    cursor.skipWhitespace();
    if (cursor.at('}')) {
      cursor.pos += 1;
    } else {
      while (true) {
        cursor.skipWhitespace();
        if (!cursor.at('"')) cursor.fail(`expected a quoted key but found ${cursor.describeHere()}`);
        const key = cursor.readString();
        cursor.expect(':', "':'");
        members.push({ key, value: cursor.readValue(1) });
        cursor.skipWhitespace();
        if (cursor.at(',')) {
          cursor.pos += 1;
          continue;
        }
        if (cursor.at('}')) {
          cursor.pos += 1;
          break;
        }
        cursor.fail(`expected ',' or '}' but found ${cursor.describeHere()}`);
      }
    }
    cursor.skipWhitespace();
    if (!cursor.atEnd()) cursor.fail('unexpected text after the JSON object; send exactly one object per request');
    return { ok: true, members };
  } catch (error) {
    if (!(error instanceof JsonSyntaxError)) throw error;
    return { ok: false, detail: `malformed JSON at ${lineAndColumn(text, error.at)}: ${error.message}` };
  }
}

/** A read position in the body; a syntax error is thrown as JsonSyntaxError at that position. */
class JsonCursor {
  pos = 0;

  constructor(private readonly text: string) {}

  fail(message: string, at = this.pos): never {
    throw new JsonSyntaxError(message, at);
  }

  atEnd(): boolean {
    return this.pos >= this.text.length;
  }

  at(character: string): boolean {
    return this.text[this.pos] === character;
  }

  skipWhitespace(): void {
    const { text } = this;
    let { pos } = this;
    while (pos < text.length) {
      const code = text.charCodeAt(pos);
      // space, tab, line feed, carriage return: the only white space JSON has
      if (code !== 0x20 && code !== 0x09 && code !== 0x0a && code !== 0x0d) break;
      pos += 1;
    }
    this.pos = pos;
  }

  describeHere(): string {
    return this.atEnd() ? 'the end of the body' : quotedExcerpt(this.text[this.pos]!);
  }

  expect(character: string, what: string): void {
    this.skipWhitespace();
    if (!this.at(character)) this.fail(`expected ${what} but found ${this.describeHere()}`);
    this.pos += 1;
  }

  /** Called with pos on the opening quote. */
  readString(): string {
    const { text } = this;
    const start = this.pos;
    let pos = start + 1;
    let result = '';
    let runStart = pos;
    while (true) {
      if (pos >= text.length) this.fail('unterminated string', start);
      const code = text.charCodeAt(pos);
      if (code === 0x22) {
        this.pos = pos + 1;
        return result + text.slice(runStart, pos);
      }
      if (code < 0x20) this.fail('control character inside a string; escape it (for example \\n)', pos);
      if (code === 0x5c) {
        result += text.slice(runStart, pos);
        const escape = text[pos + 1];
        if (escape !== undefined && Object.hasOwn(SIMPLE_ESCAPES, escape)) {
          result += SIMPLE_ESCAPES[escape];
          pos += 2;
        } else if (escape === 'u' && HEX4.test(text.slice(pos + 2, pos + 6))) {
          result += String.fromCharCode(parseInt(text.slice(pos + 2, pos + 6), 16));
          pos += 6;
        } else {
          this.fail('invalid escape sequence in a string', pos);
        }
        runStart = pos;
        continue;
      }
      pos += 1;
    }
  }

  readValue(depth: number): JsonValue {
    this.skipWhitespace();
    const { text } = this;
    const character = text[this.pos];
    if (character === '"') return { kind: 'string', value: this.readString() };
    if (character === '{') {
      const start = this.pos;
      this.skipComposite('{', '}', depth + 1);
      return { kind: 'object', text: this.text.slice(start, this.pos) };
    }
    if (character === '[') {
      this.skipComposite('[', ']', depth + 1);
      return ARRAY_VALUE;
    }
    if (character === 't' || character === 'f' || character === 'n') {
      for (const [word, value] of LITERALS) {
        if (text.startsWith(word, this.pos)) {
          this.pos += word.length;
          return value;
        }
      }
    }
    const end = numberEnd(text, this.pos);
    if (end > this.pos) {
      const literal = text.slice(this.pos, end);
      this.pos = end;
      return { kind: 'number', value: Number(literal), text: literal };
    }
    return this.fail(`expected a value but found ${this.describeHere()}`);
  }

  /** A nested object or array: syntax checked, content dropped. */
  private skipComposite(open: '{' | '[', close: '}' | ']', depth: number): void {
    if (depth > MAX_JSON_NESTING) this.fail(`nesting deeper than ${MAX_JSON_NESTING} levels`);
    this.pos += 1;
    this.skipWhitespace();
    if (this.at(close)) {
      this.pos += 1;
      return;
    }
    while (true) {
      if (open === '{') {
        this.skipWhitespace();
        if (!this.at('"')) this.fail(`expected a quoted key but found ${this.describeHere()}`);
        this.readString();
        this.expect(':', "':'");
      }
      this.readValue(depth);
      this.skipWhitespace();
      if (this.at(',')) {
        this.pos += 1;
        continue;
      }
      if (this.at(close)) {
        this.pos += 1;
        return;
      }
      this.fail(`expected ',' or '${close}' but found ${this.describeHere()}`);
    }
  }
}

/**
 * Where the longest JSON number starting at `start` ends (`start` itself when there is none):
 * -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?, each optional part taken only when complete,
 * so `1.` reads as 1 and leaves the point to be reported as unexpected.
 */
function numberEnd(text: string, start: number): number {
  let pos = start;
  if (text.charCodeAt(pos) === 0x2d) pos += 1; // -
  if (text.charCodeAt(pos) === 0x30) {
    pos += 1; // a leading 0 stands alone
  } else if (isDigit(text.charCodeAt(pos))) {
    pos = digitsEnd(text, pos);
  } else {
    return start;
  }
  if (text.charCodeAt(pos) === 0x2e && isDigit(text.charCodeAt(pos + 1))) pos = digitsEnd(text, pos + 1); // .
  const exponent = text.charCodeAt(pos);
  if (exponent === 0x65 || exponent === 0x45) {
    // e E
    let digits = pos + 1;
    const sign = text.charCodeAt(digits);
    if (sign === 0x2b || sign === 0x2d) digits += 1; // + -
    if (isDigit(text.charCodeAt(digits))) pos = digitsEnd(text, digits);
  }
  return pos;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

function digitsEnd(text: string, start: number): number {
  let pos = start;
  while (isDigit(text.charCodeAt(pos))) pos += 1;
  return pos;
}

function lineAndColumn(text: string, at: number): string {
  const before = text.slice(0, at);
  const line = before.split('\n').length;
  const column = at - (before.lastIndexOf('\n') + 1) + 1;
  return `line ${line}, column ${column}`;
}
