import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import {
  applySignal,
  applyTick,
  createEngineState,
  interleave,
  parseInstrumentsFile,
  parseSignalsFile,
  parseTicksFile,
  rejectedEvent,
  summarize,
  type EngineEvent,
  type EngineState,
  type FileOutcome,
  type InstrumentsFile,
  type SummaryEvent,
} from '../../engine/index.js';
import { parseSignal } from '../../language/index.js';

/**
 * `signalgate simulate`: replays a ticks file and a signals file through the execution engine
 * and prints one JSON object per line (docs/engine.md, "Output"), the `summary` last. Times print as
 * ISO 8601 UTC. Bad input (unreadable file, bad line, bad option, a ticks file without ticks)
 * prints `file:line: problem` (`file: problem` for the file as a whole) on stderr, prints no
 * events and exits 1; a signal that does not parse, an empty one included, is a `rejected`
 * event and the run goes on.
 */
export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('replay ticks and signals through the execution engine and print the events as JSON lines')
    .requiredOption('--ticks <file>', 'CSV of time,symbol,bid,ask')
    .requiredOption('--signals <file>', 'lines of time,<signal text>')
    .option('--balance <amount>', 'starting balance', '10000')
    .option('--currency <code>', 'account currency', 'USD')
    .option('--instruments <file>', 'JSON with instrument overrides and the symbol map')
    .option('--default-volume <lots>', 'lots for a signal without volume (default: the minimum lot)')
    .action((options: SimulateOptions) => {
      const result = simulate(options);
      if (!result.ok) {
        process.stderr.write(`signalgate simulate: ${result.message}\n`);
        process.exitCode = 1;
        return;
      }
      process.stdout.write(result.lines.join('\n') + '\n');
    });
}

interface SimulateOptions {
  ticks: string;
  signals: string;
  balance: string;
  currency: string;
  instruments?: string;
  defaultVolume?: string;
}

type Simulation = { ok: true; lines: string[] } | { ok: false; message: string };

function simulate(options: SimulateOptions): Simulation {
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
  const signals = readRecords(options.signals, parseSignalsFile);
  if (!signals.ok) return signals;

  let state: EngineState = createEngineState({
    balance,
    currency,
    instruments: instruments.instruments,
    symbolMap: instruments.symbolMap,
    defaultVolumeLots,
  });
  const lines: string[] = [];
  const print = (event: EngineEvent | SummaryEvent): void => {
    lines.push(JSON.stringify({ ...event, time: new Date(event.time).toISOString() }));
  };
  const steps = interleave(ticks.records, signals.records);
  for (const step of steps) {
    let events: EngineEvent[];
    if (step.kind === 'tick') {
      ({ state, events } = applyTick(state, step));
    } else {
      const parsed = parseSignal(step.text, 'text');
      if (parsed.ok) {
        ({ state, events } = applySignal(state, parsed.signal, step.time, { text: step.text }));
      } else {
        events = [rejectedEvent(step.time, step.text, parsed.problems.map((p) => p.detail).join(' '))];
      }
    }
    for (const event of events) print(event);
  }
  // parseTicksFile refuses a file without ticks, so there is always a last step to date the summary.
  const last = steps.at(-1);
  if (last === undefined) throw new Error('simulate: no tick to replay, which parseTicksFile should have refused');
  print(summarize(state, last.time));
  return { ok: true, lines };
}

function readText(file: string): { ok: true; text: string } | { ok: false; message: string } {
  try {
    return { ok: true, text: readFileSync(file, 'utf8') };
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message;
    return { ok: false, message: `${file}: ${reason}` };
  }
}

function readRecords<T>(
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
