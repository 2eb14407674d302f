/**
 * Splits a text-format body (`EURUSD,buy,sl_pips=20,comment="a, b",exop`) into its tokens.
 * Only the shape is checked here; what the names and values mean is decided later.
 *
 * Quoting: a value (the part after `=`) may be wrapped in double quotes to hold commas; inside
 * the quotes `""` stands for one `"` (the CSV convention, so no backslash rules to learn).
 * A quote anywhere else (in a name, the symbol, the action, or in the middle of an unquoted
 * value) is a parse error rather than a guess.
 */
import { quotedExcerpt } from './quoted-excerpt.js';

export interface TextToken {
  /** 0-based place among the comma-separated tokens; 0 is the symbol, 1 the action. */
  index: number;
  /** The whole token, trimmed (what the symbol and action positions use). */
  raw: string;
  /** The trimmed text before the first `=`; the whole token when there is none. */
  name: string;
  /** The trimmed text after the first `=` (unquoted when it was quoted); absent for a bare token. */
  value?: { text: string; quoted: boolean };
}

export type TextTokenizing = { ok: true; tokens: TextToken[] } | { ok: false; detail: string };

const EXAMPLE = 'EURUSD,buy,vol=0.1,sl_pips=20';

const LINE_BREAK = /\r\n|\r|\n/;
const COMMA = 0x2c;
const DOUBLE_QUOTE = 0x22;

/** The body's non-blank lines; a body without a line break (the usual case) is its only line. */
function nonBlankLines(body: string): string[] {
  if (!body.includes('\n') && !body.includes('\r')) return body.trim() === '' ? [] : [body];
  return body.split(LINE_BREAK).filter((line) => line.trim() !== '');
}

export function tokenizeSignalLine(body: string): TextTokenizing {
  const lines = nonBlankLines(body);
  if (lines.length === 0) return { ok: false, detail: `the body is empty; send one signal line like ${EXAMPLE}` };
  if (lines.length > 1) {
    return {
      ok: false,
      detail: `the body holds ${lines.length} non-blank lines; send exactly one signal per request (one line like ${EXAMPLE})`,
    };
  }
  const line = lines[0]!;
  const tokens: TextToken[] = [];
  let index = 0;
  let pos = 0;
  while (true) {
    const start = pos;
    while (pos < line.length) {
      const code = line.charCodeAt(pos);
      if (code === COMMA || code === DOUBLE_QUOTE) break;
      pos += 1;
    }
    const head = line.slice(start, pos);
    let quoted: string | undefined;
    if (line.charCodeAt(pos) === DOUBLE_QUOTE) {
      const equals = head.indexOf('=');
      if (index < 2 || equals < 0 || head.slice(equals + 1).trim() !== '') {
        return {
          ok: false,
          detail: `unexpected double quote in token ${index + 1} (${quotedExcerpt(head.trim() + line.slice(pos).split(',')[0])}); quotes may only wrap a whole value, as in comment="a, b"`,
        };
      }
      const reading = readQuoted(line, pos);
      if (!reading.ok) {
        return {
          ok: false,
          detail: `${reading.problem} in the value of ${quotedExcerpt(head.slice(0, equals).trim())} (token ${index + 1}); ${QUOTING_HELP}`,
        };
      }
      quoted = reading.text;
      pos = reading.end;
      while (pos < line.length && line[pos] !== ',' && line[pos]!.trim() === '') pos += 1;
      if (pos < line.length && line[pos] !== ',') {
        return {
          ok: false,
          detail: `text after the closing quote in token ${index + 1} (${quotedExcerpt(head.slice(0, equals).trim())}); ${QUOTING_HELP}`,
        };
      }
    }
    const token = buildToken(index, head, quoted);
    if (!token.ok) return token;
    if (token.token !== undefined) tokens.push(token.token);
    if (pos >= line.length) break;
    pos += 1; // the comma
    index += 1;
  }
  return { ok: true, tokens };
}

const QUOTING_HELP = 'a quoted value ends with " and a " inside it is written twice (comment="say ""hi""")';

type QuotedReading = { ok: true; text: string; end: number } | { ok: false; problem: string };

/** Reads a quoted value starting at the opening quote; `end` is just past the closing quote. */
function readQuoted(line: string, start: number): QuotedReading {
  let text = '';
  let pos = start + 1;
  while (true) {
    const quote = line.indexOf('"', pos);
    if (quote < 0) return { ok: false, problem: 'unterminated quote' };
    text += line.slice(pos, quote);
    if (line.charCodeAt(quote + 1) !== DOUBLE_QUOTE) return { ok: true, text, end: quote + 1 };
    text += '"';
    pos = quote + 2;
  }
}

type TokenBuilding = { ok: true; token: TextToken | undefined } | { ok: false; detail: string };

function buildToken(index: number, head: string, quoted: string | undefined): TokenBuilding {
  const raw = head.trim();
  const equals = raw.indexOf('=');
  if (index < 2) return { ok: true, token: { index, raw, name: raw } };
  // Empty tokens after the symbol and action are skipped (a trailing comma is harmless).
  if (raw === '' && quoted === undefined) return { ok: true, token: undefined };
  if (equals < 0) return { ok: true, token: { index, raw, name: raw } };
  const name = raw.slice(0, equals).trim();
  if (name === '') {
    return {
      ok: false,
      detail: `token ${index + 1} (${quotedExcerpt(raw)}) has a value but no name; write name=value, e.g. sl_pips=20`,
    };
  }
  const value =
    quoted === undefined ? { text: raw.slice(equals + 1).trim(), quoted: false } : { text: quoted, quoted: true };
  return { ok: true, token: { index, raw, name, value } };
}
