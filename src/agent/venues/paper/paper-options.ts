import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseInstrumentsFile, parseTicksFile, type InstrumentsFile } from '../../../engine/index.js';
import type { TransportChoice } from '../../agent-client.js';
import { readAgentToken } from '../../agent-token-setting.js';
import { feedCurrencies, unpriceable } from './feed-currencies.js';
import { REFERENCE_PRICES } from './reference-prices.js';
import type { PaperAccountSettings } from './resume-account.js';
import type { TicksFile } from './tick-file-feed.js';

/** A new paper account's balance and currency when the flags do not give them. */
export const DEFAULT_BALANCE = 10000;
export const DEFAULT_CURRENCY = 'USD';

/** The flags of `signalgate agent`, as given on the command line. */
export interface AgentFlags {
  server: string;
  token?: string;
  tokenFile?: string;
  /** `--paper`: the short form of `--venue paper`. */
  paper?: boolean;
  venue?: string;
  /** Absent: not given (a new account gets DEFAULT_BALANCE; a stored one keeps its own). */
  balance?: string;
  currency?: string;
  ticks?: string;
  instruments?: string;
  seed?: string;
  transport: string;
  defaultVolume?: string;
}

/** What the flags and environment decide: where the agent connects and keeps its data, and the paper account. */
export interface PaperSettings extends PaperAccountSettings {
  server: string;
  token: string;
  transport: TransportChoice;
  /** `SIGNALGATE_DATA_DIR`: the agent's files live under `<dataDir>/agents/<token digest>/`. */
  dataDir: string;
  /** Said at warn on start (a secret given where others can read it). */
  warnings: string[];
}

/** Checks the flags and reads the files they name; a problem is one sentence naming the flag or file:line. */
export function readPaperSettings(
  flags: AgentFlags,
  env: NodeJS.ProcessEnv,
): { ok: true; settings: PaperSettings } | { ok: false; message: string } {
  const fail = (message: string) => ({ ok: false as const, message });
  if (!/^https?:\/\/[^/]+/i.test(flags.server))
    return fail(`--server must be an http:// or https:// URL, got "${flags.server}"`);
  const tokenRead = readAgentToken(flags, env);
  if (!tokenRead.ok) return tokenRead;
  const { token } = tokenRead;
  const balance = flags.balance === undefined ? DEFAULT_BALANCE : Number(flags.balance);
  if (flags.balance !== undefined && (flags.balance.trim() === '' || !Number.isFinite(balance) || balance <= 0)) {
    return fail(`--balance must be a number above 0, got "${flags.balance}"`);
  }
  const currency = (flags.currency ?? DEFAULT_CURRENCY).trim().toUpperCase();
  if (!/^[A-Z]{3}$/.test(currency)) return fail(`--currency must be a 3-letter currency code, got "${flags.currency}"`);
  if (!['auto', 'websocket', 'long-poll'].includes(flags.transport)) {
    return fail(`--transport must be auto, websocket or long-poll, got "${flags.transport}"`);
  }
  let defaultVolumeLots: number | null = null;
  if (flags.defaultVolume !== undefined) {
    defaultVolumeLots = Number(flags.defaultVolume);
    if (flags.defaultVolume.trim() === '' || !Number.isFinite(defaultVolumeLots) || defaultVolumeLots <= 0) {
      return fail(`--default-volume must be a number of lots above 0, got "${flags.defaultVolume}"`);
    }
  }
  let seed: number | null = null;
  if (flags.seed !== undefined) {
    seed = Number(flags.seed);
    if (!/^\d+$/.test(flags.seed.trim()) || seed > 0xffffffff)
      return fail(`--seed must be a whole number from 0 to 4294967295, got "${flags.seed}"`);
  }
  let instruments: InstrumentsFile = { instruments: {}, symbolMap: {} };
  if (flags.instruments !== undefined) {
    const text = readText(flags.instruments);
    if (!text.ok) return text;
    const parsed = parseInstrumentsFile(text.text);
    if (!parsed.ok) return fail(`${located(flags.instruments, parsed.line)}: ${parsed.message}`);
    instruments = parsed.file;
  }
  let ticks: TicksFile | null = null;
  if (flags.ticks !== undefined) {
    const text = readText(flags.ticks);
    if (!text.ok) return text;
    const parsed = parseTicksFile(text.text);
    if (!parsed.ok) return fail(`${located(flags.ticks, parsed.line)}: ${parsed.message}`);
    ticks = {
      file: path.resolve(flags.ticks),
      sha256: createHash('sha256').update(text.bytes).digest('hex'),
      // Replayed in time order; equal times keep the file's order (sort is stable).
      ticks: parsed.records
        .map(({ time, symbol, bid, ask }) => ({ time, symbol, bid, ask }))
        .sort((a, b) => a.time - b.time),
    };
  }
  const currencies = feedCurrencies(
    ticks ? ticks.ticks.map((t) => t.symbol) : Object.keys(REFERENCE_PRICES),
    instruments,
  );
  if (flags.currency !== undefined && !currencies.includes(currency)) {
    const more = ticks ? ' or add ticks of a pair in that currency' : '';
    return fail(`--currency ${currency}: ${unpriceable(currencies, flags.ticks ?? null)}; choose one of those${more}`);
  }
  return {
    ok: true,
    settings: {
      server: flags.server.replace(/\/+$/, ''),
      token,
      transport: flags.transport as TransportChoice,
      dataDir: path.resolve(env.SIGNALGATE_DATA_DIR?.trim() || './data'),
      warnings: tokenRead.warnings,
      balance,
      currency,
      given: { balance: flags.balance !== undefined, currency: flags.currency !== undefined },
      currencies,
      defaultVolumeLots,
      instruments,
      instrumentsFile: flags.instruments === undefined ? null : path.resolve(flags.instruments),
      ticks,
      seed,
    },
  };
}

/** `file:line`, or just `file` when the problem is the file as a whole. */
function located(file: string, line: number | null): string {
  return line === null ? file : `${file}:${line}`;
}

function readText(file: string): { ok: true; text: string; bytes: Buffer } | { ok: false; message: string } {
  try {
    const bytes = readFileSync(file);
    return { ok: true, text: bytes.toString('utf8'), bytes };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    return { ok: false, message: `${file}: ${reason}` };
  }
}
