import {
  applySignal,
  applyTick,
  brokerSymbol,
  interleave,
  parseTimestamp,
  summarize,
  type EngineEvent,
  type EngineState,
  type ReplaySignal,
} from '../../engine/index.js';
import { renderSignalText } from '../../language/index.js';
import { compareResults } from '../../ledger/compare-results.js';
import { replayTrades, type ReplayStepEvents } from '../../ledger/replay-trades.js';
import { ledgerStatistics } from '../../ledger/statistics.js';
import type { SignalRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { recordedLedgerTrades } from './recorded-ledger.js';
import { eventLine, replayState, type ReplaySettings, type SimulateOptions } from './replay-settings.js';
import { withStore } from './with-store.js';

/** The period whose signals are replayed: receipt times, `since` included, `until` excluded, Unix ms. */
export interface LogPeriod {
  sourceId: string;
  since: number;
  until: number;
}

/** The log's page size while reading a period back (newest first, as the log pages). */
const PAGE = 500;

export function readLogPeriod(
  options: SimulateOptions,
  now: number,
): { ok: true; period: LogPeriod } | { ok: false; message: string } {
  const fail = (message: string) => ({ ok: false as const, message });
  const sourceId = options.source?.trim() ?? '';
  if (sourceId === '') {
    return fail(
      '--from-log needs --source ID: the source whose signals to replay (signalgate sources list shows them)',
    );
  }
  if (options.since === undefined) {
    return fail(
      '--from-log needs --since TIME: the first receipt time to replay (ISO 8601, like 2026-11-02T00:00:00Z)',
    );
  }
  const since = parseTimestamp(options.since);
  if (since === null) {
    return fail(`--since "${options.since}" is neither ISO 8601 (e.g. 2026-11-02T00:00:00Z) nor Unix milliseconds`);
  }
  const until = options.until === undefined ? now : parseTimestamp(options.until);
  if (until === null) {
    return fail(`--until "${options.until}" is neither ISO 8601 (e.g. 2026-11-03T00:00:00Z) nor Unix milliseconds`);
  }
  if (until <= since) {
    return fail(`--until (${new Date(until).toISOString()}) must be after --since (${new Date(since).toISOString()})`);
  }
  return { ok: true, period: { sourceId, since, until } };
}

/**
 * `signalgate simulate --from-log`: the signals a source received over a period, read from the
 * store's signal log (accepted ones: what its agents were handed), replayed through the engine
 * against the ticks at the times they were received, with the settings given. It prints what
 * `simulate` prints (the events, then the summary), then the replay's trades (`trade` lines), its
 * statistics, and the ledger's for the same period beside it with their comparison, or a
 * `ledger` line saying why there is none.
 */
export async function simulateFromLog(settings: ReplaySettings, period: LogPeriod): Promise<void> {
  await withStore(async (store) => {
    const source = await store.sources.get(period.sourceId);
    if (source === null) {
      process.stderr.write(
        `signalgate simulate: no source ${period.sourceId} in this store; signalgate sources list shows its sources\n`,
      );
      process.exitCode = 1;
      return;
    }
    const records = await receivedSignals(store, period);
    const from = new Date(period.since).toISOString();
    const until = new Date(period.until).toISOString();
    process.stderr.write(
      `signalgate simulate: replaying ${records.length} signals source ${source.id} received from ${from} until ${until}\n`,
    );
    const lines = replayLines(settings, records, { accountId: source.accountId, sourceId: source.id });
    const trades = lines.trades;
    const options = { from, until, startingEquity: settings.balance };
    const statistics = ledgerStatistics(trades, options);
    for (const trade of trades) lines.out.push(JSON.stringify({ type: 'trade', ...trade }));
    lines.out.push(JSON.stringify({ type: 'statistics', of: 'replay', ...statistics }));
    const real = await recordedLedgerTrades(store, { sourceId: source.id, from, until });
    if (real === null) {
      lines.out.push(
        JSON.stringify({
          type: 'ledger',
          available: false,
          reason: 'this store keeps no ledger of real trades yet, so the replay is shown alone',
        }),
      );
    } else {
      // The real account's starting equity for the period is not known here: the curve starts at the same balance.
      const realStatistics = ledgerStatistics(real, options);
      lines.out.push(JSON.stringify({ type: 'statistics', of: 'ledger', ...realStatistics }));
      lines.out.push(
        JSON.stringify({
          type: 'comparison',
          ...compareResults({ trades, statistics }, { trades: real, statistics: realStatistics }),
        }),
      );
    }
    process.stdout.write(lines.out.join('\n') + '\n');
  });
}

/** The source's accepted signals received in the period, oldest first (in log order). */
async function receivedSignals(store: Store, period: LogPeriod): Promise<SignalRecord[]> {
  const found: SignalRecord[] = [];
  let before: string | undefined;
  for (;;) {
    const page = await store.signals.list({ sourceId: period.sourceId, status: 'accepted', limit: PAGE, before });
    let older = false;
    for (const record of page.signals) {
      const at = Date.parse(record.receivedAt);
      if (at < period.since) {
        older = true;
        break;
      }
      if (at < period.until) found.push(record);
    }
    if (older || page.next === null) break;
    before = page.next;
  }
  return found.reverse();
}

/** The replay itself: events and summary lines, and the trades it made. Pure but for its input. */
function replayLines(
  settings: ReplaySettings,
  records: readonly SignalRecord[],
  owner: { accountId: string; sourceId: string },
): { out: string[]; trades: ReturnType<typeof replayTrades> } {
  // The signal's place in `records` rides in `line` (1-based), so interleave keeps the log's order.
  const signals: ReplaySignal[] = records.map((r, i) => ({
    time: Date.parse(r.receivedAt),
    text: r.rawBody,
    line: i + 1,
  }));
  const steps = interleave(settings.ticks, signals);
  let state: EngineState = replayState(settings);
  const out: string[] = [];
  const applied: ReplayStepEvents[] = [];
  for (const step of steps) {
    let events: EngineEvent[];
    if (step.kind === 'tick') {
      ({ state, events } = applyTick(state, step));
      applied.push({ signal: null, events });
    } else {
      const record = records[step.line - 1]!;
      // Accepted signals always carry their normalized form; the agent executes that, not the raw body.
      const signal = record.signal!;
      const quote = state.quotes[brokerSymbol(state.config.symbolMap, signal.symbol)] ?? null;
      ({ state, events } = applySignal(state, signal, step.time, {
        signalId: record.id,
        text: renderSignalText(signal),
      }));
      applied.push({
        signal: {
          id: record.id,
          sourceId: record.sourceId,
          accountId: record.accountId,
          receivedAt: record.receivedAt,
          quote: quote === null ? null : { bid: quote.bid, ask: quote.ask },
        },
        events,
      });
    }
    for (const event of events) out.push(eventLine(event));
  }
  const last = steps.at(-1);
  if (last === undefined) throw new Error('simulate: no tick to replay, which parseTicksFile should have refused');
  out.push(eventLine(summarize(state, last.time)));
  return { out, trades: replayTrades(applied, { agentId: 'replay', ...owner }) };
}
