/**
 * Replay input (CONTRACT §7): the ticks file (`time,symbol,bid,ask`) and the signals file
 * (`time,<signal text>`, the rest of the line after the first comma being the signal), and
 * their interleaving in time order, a signal before a tick of the same time, each file's own
 * order kept among equal times. Pure: text in, records out; every problem names its line.
 *
 * Both files: blank lines and lines starting with `#` are skipped; the first remaining line
 * may be a header (its first field is `time`). `time` is Unix milliseconds or ISO 8601
 * (`2024-03-01T09:30:00Z`, `2024-03-01T10:30:00.250+01:00`, `2024-03-01 09:30`, `2024-03-01`);
 * an ISO time without an offset is UTC.
 */
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

export type FileOutcome<T> = { ok: true; records: T[] } | { ok: false; line: number; message: string };

/** The last instant a JavaScript Date can hold (year 275760). */
const MAX_TIME = 8.64e15;

const ISO =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d+))?)?\s*(Z|z|[+-]\d{2}(?::?\d{2})?)?)?$/;

/** Unix milliseconds from Unix milliseconds or ISO 8601 text; null when it is neither. */
export function parseTimestamp(text: string): number | null {
  const t = text.trim();
  if (/^\d+$/.test(t)) {
    const ms = Number(t);
    return ms <= MAX_TIME ? ms : null;
  }
  const m = ISO.exec(t);
  if (m === null) return null;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map((s) => Number(s ?? 0)) as [
    number, number, number, number, number, number,
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

const DECIMAL = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

function parseDecimal(text: string): number | null {
  return DECIMAL.test(text) ? Number(text) : null;
}

/** The lines that carry records: numbered from 1, without blanks, comments and the header. */
function recordLines(text: string): { line: number; content: string }[] {
  const lines: { line: number; content: string }[] = [];
  let first = true;
  for (const [index, content] of text.replace(/^\uFEFF/, '').split(/\r?\n/).entries()) {
    const trimmed = content.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const header = first && /^time\s*(,|$)/i.test(trimmed);
    first = false;
    if (!header) lines.push({ line: index + 1, content: trimmed });
  }
  return lines;
}

function timeProblem(text: string): string {
  return `time "${text}" is neither ISO 8601 (e.g. 2024-03-01T09:30:00Z) nor Unix milliseconds`;
}

export function parseTicksFile(text: string): FileOutcome<ReplayTick> {
  const records: ReplayTick[] = [];
  for (const { line, content } of recordLines(text)) {
    const fields = content.split(',').map((f) => f.trim());
    if (fields.length !== 4) {
      return { ok: false, line, message: `expected 4 fields (time,symbol,bid,ask), found ${fields.length}` };
    }
    const [timeText, symbol, bidText, askText] = fields as [string, string, string, string];
    const time = parseTimestamp(timeText);
    if (time === null) return { ok: false, line, message: timeProblem(timeText) };
    if (symbol === '') return { ok: false, line, message: 'the symbol is empty' };
    const bid = parseDecimal(bidText);
    const ask = parseDecimal(askText);
    if (bid === null || !(bid > 0)) return { ok: false, line, message: `bid "${bidText}" is not a price above 0` };
    if (ask === null || !(ask > 0)) return { ok: false, line, message: `ask "${askText}" is not a price above 0` };
    if (ask < bid) return { ok: false, line, message: `ask ${askText} is below bid ${bidText}` };
    records.push({ time, symbol, bid, ask, line });
  }
  return { ok: true, records };
}

export function parseSignalsFile(text: string): FileOutcome<ReplaySignal> {
  const records: ReplaySignal[] = [];
  for (const { line, content } of recordLines(text)) {
    const comma = content.indexOf(',');
    if (comma < 0) return { ok: false, line, message: 'expected time,<signal>' };
    const timeText = content.slice(0, comma).trim();
    const time = parseTimestamp(timeText);
    if (time === null) return { ok: false, line, message: timeProblem(timeText) };
    const signal = content.slice(comma + 1).trim();
    if (signal === '') return { ok: false, line, message: 'there is no signal after the time' };
    records.push({ time, text: signal, line });
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
