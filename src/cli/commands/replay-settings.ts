import { readFileSync } from 'node:fs';
import {
  createEngineState,
  parseInstrumentsFile,
  parseTicksFile,
  type EngineEvent,
  type EngineState,
  type FileOutcome,
  type InstrumentsFile,
  type ReplayTick,
  type SummaryEvent,
} from '../../engine/index.js';

/** The flags of `signalgate simulate`, as given. */
export interface SimulateOptions {
  ticks: string;
  signals?: string;
  fromLog?: boolean;
  source?: string;
  since?: string;
  until?: string;
  latency?: string;
  balance: string;
  currency: string;
  instruments?: string;
  defaultVolume?: string;
}

/** What both kinds of replay share: the account, the instruments and the ticks. */
export interface ReplaySettings {
  balance: number;
  currency: string;
  defaultVolumeLots: number | null;
  instruments: InstrumentsFile;
  ticks: ReplayTick[];
}

export function readReplaySettings(
  options: SimulateOptions,
): { ok: true; settings: ReplaySettings } | { ok: false; message: string } {
  const balance = Number(options.balance);
  if (options.balance.trim() === '' || !Number.isFinite(balance) || balance <= 0) {
    return { ok: false, message: `--balance must be a number above 0, got "${options.balance}"` };
  }
  const currency = options.currency.trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) {
    return { ok: false, message: `--currency must be a 3-letter currency code, got "${options.currency}"` };
  }
  let defaultVolumeLots: number | null = null;
  if (options.defaultVolume !== undefined) {
    defaultVolumeLots = Number(options.defaultVolume);
    if (options.defaultVolume.trim() === '' || !Number.isFinite(defaultVolumeLots) || defaultVolumeLots <= 0) {
      return {
        ok: false,
        message: `--default-volume must be a number of lots above 0, got "${options.defaultVolume}"`,
      };
    }
  }

  let instruments: InstrumentsFile = { instruments: {}, symbolMap: {} };
  if (options.instruments !== undefined) {
    const text = readText(options.instruments);
    if (!text.ok) return text;
    const parsed = parseInstrumentsFile(text.text);
    if (!parsed.ok) return { ok: false, message: `${options.instruments}:${parsed.line ?? 1}: ${parsed.message}` };
    instruments = parsed.file;
  }
  const ticks = readRecords(options.ticks, parseTicksFile);
  if (!ticks.ok) return ticks;
  return { ok: true, settings: { balance, currency, defaultVolumeLots, instruments, ticks: ticks.records } };
}

/** A new engine state for a replay with these settings. */
export function replayState(settings: ReplaySettings): EngineState {
  return createEngineState({
    balance: settings.balance,
    currency: settings.currency,
    instruments: settings.instruments.instruments,
    symbolMap: settings.instruments.symbolMap,
    defaultVolumeLots: settings.defaultVolumeLots,
  });
}

/** An engine event or the summary as a line of output: the event with its time in ISO 8601 UTC. */
export function eventLine(event: EngineEvent | SummaryEvent): string {
  return JSON.stringify({ ...event, time: new Date(event.time).toISOString() });
}

function readText(file: string): { ok: true; text: string } | { ok: false; message: string } {
  try {
    return { ok: true, text: readFileSync(file, 'utf8') };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    return { ok: false, message: `${file}: ${reason}` };
  }
}

export function readRecords<T>(
  file: string,
  parse: (text: string) => FileOutcome<T>,
): { ok: true; records: T[] } | { ok: false; message: string } {
  const text = readText(file);
  if (!text.ok) return text;
  const parsed = parse(text.text);
  if (!parsed.ok) {
    const where = parsed.line === null ? file : `${file}:${parsed.line}`;
    return { ok: false, message: `${where}: ${parsed.message}` };
  }
  return parsed;
}
