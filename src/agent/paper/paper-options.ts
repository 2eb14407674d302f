import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseInstrumentsFile, parseTicksFile, type InstrumentsFile, type Tick } from '../../engine/index.js';
import type { TransportChoice } from '../agent-client.js';
import type { PaperAgentOptions } from './paper-agent.js';

/** The flags of `signalgate agent`, as given on the command line. */
export interface AgentFlags {
  server: string;
  token?: string;
  paper?: boolean;
  balance: string;
  currency: string;
  ticks?: string;
  instruments?: string;
  seed?: string;
  transport: string;
  defaultVolume?: string;
}

/** What the flags and environment decide; the CLI adds the logger to make the agent's options. */
export type PaperSettings = Omit<PaperAgentOptions, 'log'>;

/** Checks the flags and reads the files they name; a problem is one sentence naming the flag or file:line. */
export function readPaperSettings(
  flags: AgentFlags,
  env: NodeJS.ProcessEnv,
): { ok: true; settings: PaperSettings } | { ok: false; message: string } {
  const fail = (message: string) => ({ ok: false as const, message });
  if (!flags.paper) {
    return fail('only the paper account is built in: add --paper (a connector to another platform uses the agent client library)');
  }
  if (!/^https?:\/\/[^/]+/i.test(flags.server)) return fail(`--server must be an http:// or https:// URL, got "${flags.server}"`);
  const token = flags.token ?? env.SIGNALGATE_AGENT_TOKEN?.trim();
  if (!token) return fail('give the agent token with --token or SIGNALGATE_AGENT_TOKEN');
  const balance = Number(flags.balance);
  if (flags.balance.trim() === '' || !Number.isFinite(balance) || balance <= 0) {
    return fail(`--balance must be a number above 0, got "${flags.balance}"`);
  }
  const currency = flags.currency.trim().toUpperCase();
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
    if (!/^\d+$/.test(flags.seed.trim()) || seed > 0xffffffff) return fail(`--seed must be a whole number from 0 to 4294967295, got "${flags.seed}"`);
  }
  let instruments: InstrumentsFile = { instruments: {}, symbolMap: {} };
  if (flags.instruments !== undefined) {
    const text = readText(flags.instruments);
    if (!text.ok) return text;
    const parsed = parseInstrumentsFile(text.text);
    if (!parsed.ok) return fail(`${flags.instruments}:${parsed.line ?? 1}: ${parsed.message}`);
    instruments = parsed.file;
  }
  let ticks: Tick[] | null = null;
  if (flags.ticks !== undefined) {
    const text = readText(flags.ticks);
    if (!text.ok) return text;
    const parsed = parseTicksFile(text.text);
    if (!parsed.ok) return fail(`${flags.ticks}:${parsed.line}: ${parsed.message}`);
    if (parsed.records.length === 0) return fail(`${flags.ticks}: the file holds no ticks`);
    // Replayed in time order; equal times keep the file's order (sort is stable).
    ticks = parsed.records.map(({ time, symbol, bid, ask }) => ({ time, symbol, bid, ask })).sort((a, b) => a.time - b.time);
  }
  return {
    ok: true,
    settings: {
      server: flags.server.replace(/\/+$/, ''),
      token,
      transport: flags.transport as TransportChoice,
      dataDir: path.resolve(env.SIGNALGATE_DATA_DIR?.trim() || './data'),
      balance,
      currency,
      defaultVolumeLots,
      instruments,
      ticks,
      seed,
    },
  };
}

function readText(file: string): { ok: true; text: string } | { ok: false; message: string } {
  try {
    return { ok: true, text: readFileSync(file, 'utf8') };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    return { ok: false, message: `${file}: ${reason}` };
  }
}
