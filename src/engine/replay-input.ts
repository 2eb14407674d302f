/**
 * Replay input: the ticks file (`time,symbol,bid,ask`) and the signals file
 * (`time,<signal text>`, the rest of the line after the first comma being the signal), and
 * their interleaving in time order, a signal before a tick of the same time, each file's own
 * order kept among equal times. Pure: text in, records out; every problem names its line (a
 * ticks file without ticks, the file as a whole).
 *
 * Both files: blank lines and lines starting with `#` are skipped; the first remaining line
 * may be a header, recognised by its first field `time`, and it must then name exactly the
 * file's columns (a header with other columns, or the right ones in another order, would
 * otherwise be misread row by row). `time` is Unix milliseconds or ISO 8601
 * (`2024-03-01T09:30:00Z`, `2024-03-01T10:30:00.250+01:00`, `2024-03-01 09:30`, `2024-03-01`);
 * an ISO time without an offset is UTC. A number of 9 to 11 digits is refused: it is how Unix
 * seconds look (1973 to 5138), and read as milliseconds it would silently replay in 1970-1973.
 *
 * Ticks follow the signal language's rules, so that a tick names and prices exactly what a
 * signal can: the symbol is upper-cased (ASCII letters only) and must be a valid signal
 * symbol; prices are plain decimals (no exponent, no trailing point). A ticks file needs at
 * least one tick: without prices every signal would be rejected and the run would say nothing
 * useful. A signal body is taken as written, even empty: whether it parses is the language's
 * call, and the replay turns a body that does not into a `rejected` event.
 */
import { asciiUpperCase, readDecimal, symbolProblem } from '../language/index.js';
import type { Tick } from './apply-tick.js';

export interface ReplayTick extends Tick {
  readonly line: number;
}

export interface ReplaySignal {
  readonly time: number;
  readonly text: string;
  readonly line: number;
}

export type ReplayStep = ({ kind: 'signal' } & ReplaySignal) | ({ kind: 'tick' } & ReplayTick);

/** A failure names its line, or null when the problem is the file as a whole. */
export type FileOutcome<T> = { ok: true; records: T[] } | { ok: false; line: number | null; message: string };

/** The last instant a JavaScript Date can hold (year 275760). */
const MAX_TIME = 8.64e15;

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** Unix milliseconds from Unix milliseconds or ISO 8601 text; null when it is neither. */
export function parseTimestamp(text: string): number | null {
  const t = text.trim();
  if (/^\d+$/.test(t)) {
    if (looksLikeSeconds(t)) return null;
    const ms = Number(t);
    return ms <= MAX_TIME ? ms : null;
  }
  const m = ISO.exec(t);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((s) => Number(s ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const ms = Number((m[7] ?? '').slice(0, 3).padEnd(3, '0'));
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return null;
  if (hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  const zone = m[8];
  if (zone !== undefined && zone.toUpperCase() !== 'Z') {
    const digits = zone.slice(1).replace(':', '');
    const oh = Number(digits.slice(0, 2));
    const om = Number(digits.slice(2) || '0');
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (zone[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(year, month - 1, day);
  utc.setUTCHours(hour, minute, second, ms);
  return utc.getTime() - offsetMinutes * 60_000;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** A tick price: a plain decimal above 0, or the sentence saying what is wrong with it. */
function readPrice(name: 'bid' | 'ask', text: string): number | string {
  const reading = readDecimal(text);
  if (!reading.ok) {
    return `${name} "${text}" is not a plain decimal number (digits with an optional fraction, like 1.10020; no exponent, no trailing point)`;
  }
  return reading.value > 0 ? reading.value : `${name} "${text}" is not a price above 0`;
}

interface RecordLines {
  lines: { line: number; content: string }[];
  /** The header, when the first line that is neither blank nor a comment starts with `time`. */
  header: { line: number; fields: string[]; content: string } | null;
}

/** The lines that carry records (numbered from 1, without blanks and comments) and the header. */
function recordLines(text: string): RecordLines {
  const lines: { line: number; content: string }[] = [];
  let header: RecordLines['header'] = null;
  for (const [index, content] of text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .entries()) {
    const trimmed = content.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    // Only the first record line can be a header; the rest are split by their readers.
    const fields: string[] | null =
      lines.length === 0 && header === null ? trimmed.split(',').map((f) => f.trim().toLowerCase()) : null;
    if (fields?.[0] === 'time') {
      header = { line: index + 1, fields, content: trimmed };
    } else {
      lines.push({ line: index + 1, content: trimmed });
    }
  }
  return { lines, header };
}

/** Null when the header is absent or names exactly `columns`; else the failure naming its line. */
function headerProblem(
  header: RecordLines['header'],
  columns: readonly string[],
  hint: string,
): { ok: false; line: number; message: string } | null {
  if (header === null || header.fields.join(',') === columns.join(',')) return null;
  return {
    ok: false,
    line: header.line,
    message: `the header must be exactly ${columns.join(',')} (${hint}), got "${header.content}"; fix it or remove the line`,
  };
}

/**
 * 9 to 11 digits (1e8 to under 1e11): as Unix seconds a date from 1973 to 5138, as milliseconds
 * one between 1970-01-02 and 1973-03-03, which no price history is. Shorter numbers stay
 * milliseconds (synthetic times like 1000), longer ones are milliseconds from 1973 on.
 */
function looksLikeSeconds(digits: string): boolean {
  const significant = digits.replace(/^0+/, '');
  return significant.length >= 9 && significant.length <= 11;
}

function timeProblem(text: string): string {
  const t = text.trim();
  if (/^\d+$/.test(t) && looksLikeSeconds(t)) {
    const asMs = new Date(Number(t)).toISOString();
    return `time "${text}" looks like Unix seconds (read as milliseconds it would be ${asMs}); times are Unix milliseconds or ISO 8601: for seconds, write ${t}000, or a time like 2024-03-01T09:30:00Z`;
  }
  return `time "${text}" is neither ISO 8601 (e.g. 2024-03-01T09:30:00Z) nor Unix milliseconds`;
}

const TICK_COLUMNS = ['time', 'symbol', 'bid', 'ask'] as const;

export function parseTicksFile(text: string): FileOutcome<ReplayTick> {
  const { lines, header } = recordLines(text);
  const badHeader = headerProblem(header, TICK_COLUMNS, 'in this order');
  if (badHeader !== null) return badHeader;
  if (lines.length === 0) {
    return {
      ok: false,
      line: null,
      message:
        'holds no ticks; the replay needs at least one line of time,symbol,bid,ask (like 2024-03-01T09:30:00Z,EURUSD,1.10000,1.10020)',
    };
  }
  const records: ReplayTick[] = [];
  for (const { line, content } of lines) {
    const fields = content.split(',').map((f) => f.trim());
    if (fields.length !== 4) {
      return { ok: false, line, message: `expected 4 fields (time,symbol,bid,ask), found ${fields.length}` };
    }
    const [timeText, symbolText, bidText, askText] = fields as [string, string, string, string];
    const time = parseTimestamp(timeText);
    if (time === null) return { ok: false, line, message: timeProblem(timeText) };
    if (symbolText === '') return { ok: false, line, message: 'the symbol is empty' };
    const symbol = asciiUpperCase(symbolText);
    const badSymbol = symbolProblem(symbol, 'text');
    if (badSymbol !== undefined) return { ok: false, line, message: badSymbol };
    const bid = readPrice('bid', bidText);
    if (typeof bid === 'string') return { ok: false, line, message: bid };
    const ask = readPrice('ask', askText);
    if (typeof ask === 'string') return { ok: false, line, message: ask };
    if (ask < bid) return { ok: false, line, message: `ask ${askText} is below bid ${bidText}` };
    records.push({ time, symbol, bid, ask, line });
  }
  return { ok: true, records };
}

const SIGNAL_COLUMNS = ['time', 'signal'] as const;

export function parseSignalsFile(text: string): FileOutcome<ReplaySignal> {
  const { lines, header } = recordLines(text);
  const badHeader = headerProblem(header, SIGNAL_COLUMNS, 'the signal being the rest of the line');
  if (badHeader !== null) return badHeader;
  const records: ReplaySignal[] = [];
  for (const { line, content } of lines) {
    const comma = content.indexOf(',');
    if (comma < 0) return { ok: false, line, message: 'expected time,<signal>' };
    const timeText = content.slice(0, comma).trim();
    const time = parseTimestamp(timeText);
    if (time === null) return { ok: false, line, message: timeProblem(timeText) };
    records.push({ time, text: content.slice(comma + 1).trim(), line });
  }
  return { ok: true, records };
}

/** Ticks and signals in time order; at equal times signals first, each file's order kept. */
export function interleave(ticks: readonly ReplayTick[], signals: readonly ReplaySignal[]): ReplayStep[] {
  const steps: ReplayStep[] = [
    ...signals.map((s) => ({ kind: 'signal' as const, ...s })),
    ...ticks.map((t) => ({ kind: 'tick' as const, ...t })),
  ];
  // Array.prototype.sort is stable, so equal keys keep the order built above.
  return steps.sort((a, b) => a.time - b.time || (a.kind === b.kind ? 0 : a.kind === 'signal' ? -1 : 1));
}
