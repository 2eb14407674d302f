import type { Command } from 'commander';
import {
  applySignal,
  applyTick,
  interleave,
  parseSignalsFile,
  rejectedEvent,
  summarize,
  type EngineEvent,
  type EngineState,
  type SummaryEvent,
} from '../../engine/index.js';
import { parseSignal } from '../../language/index.js';
import { eventLine, readRecords, readReplaySettings, replayState, type SimulateOptions } from './replay-settings.js';
import { readLogPeriod, simulateFromLog } from './simulate-from-log.js';

/**
 * `signalgate simulate`: replays a ticks file and a signals file through the execution engine
 * and prints one JSON object per line (docs/engine.md, "Output"), the `summary` last. Times print as
 * ISO 8601 UTC. Bad input (unreadable file, bad line, bad option, a ticks file without ticks)
 * prints `file:line: problem` (`file: problem` for the file as a whole) on stderr, prints no
 * events and exits 1; a signal that does not parse, an empty one included, is a `rejected`
 * event and the run goes on. With `--from-log` the signals are those a source received, read from
 * the store (simulate-from-log.ts).
 */
export function registerSimulateCommand(program: Command): void {
  program
    .command('simulate')
    .description('replay ticks and signals through the execution engine and print the events as JSON lines')
    .requiredOption('--ticks <file>', 'CSV of time,symbol,bid,ask')
    .option('--signals <file>', 'lines of time,<signal text>')
    .option('--from-log', "replay the signals a source received, from the store's signal log, instead of --signals")
    .option('--source <id>', 'with --from-log: the source whose signals are replayed')
    .option('--since <time>', 'with --from-log: the first receipt time replayed (ISO 8601 or Unix ms)')
    .option('--until <time>', 'with --from-log: replay signals received before this time (default: now)')
    .option('--latency <ms>', 'with --from-log: apply each signal this many milliseconds after its receipt', '0')
    .option('--balance <amount>', 'starting balance', '10000')
    .option('--currency <code>', 'account currency', 'USD')
    .option('--instruments <file>', 'JSON with instrument overrides and the symbol map')
    .option('--default-volume <lots>', 'lots for a signal without volume (default: the minimum lot)')
    .action(async (options: SimulateOptions) => {
      const fail = (message: string) => {
        process.stderr.write(`signalgate simulate: ${message}\n`);
        process.exitCode = 1;
      };
      if (options.fromLog === true) {
        if (options.signals !== undefined) return fail('give --signals or --from-log, not both');
        const settings = readReplaySettings(options);
        if (!settings.ok) return fail(settings.message);
        const period = readLogPeriod(options, Date.now());
        if (!period.ok) return fail(period.message);
        return simulateFromLog(settings.settings, period.period);
      }
      const logOnly = (['source', 'since', 'until'] as const).find((name) => options[name] !== undefined);
      if (options.latency !== undefined && options.latency !== '0' && logOnly === undefined) {
        return fail('--latency applies only with --from-log; add --from-log, or leave it out');
      }
      if (logOnly !== undefined)
        return fail(`--${logOnly} applies only with --from-log; add --from-log, or leave it out`);
      if (options.signals === undefined) {
        return fail('give the signals to replay: --signals FILE, or --from-log --source ID --since TIME');
      }
      const result = simulate(options, options.signals);
      if (!result.ok) return fail(result.message);
      process.stdout.write(result.lines.join('\n') + '\n');
    });
}

type Simulation = { ok: true; lines: string[] } | { ok: false; message: string };

function simulate(options: SimulateOptions, signalsFile: string): Simulation {
  const read = readReplaySettings(options);
  if (!read.ok) return read;
  const signals = readRecords(signalsFile, parseSignalsFile);
  if (!signals.ok) return signals;

  let state: EngineState = replayState(read.settings);
  const lines: string[] = [];
  const print = (event: EngineEvent | SummaryEvent): void => {
    lines.push(eventLine(event));
  };
  const steps = interleave(read.settings.ticks, signals.records);
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
