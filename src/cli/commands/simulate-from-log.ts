import {
  applySignal,
  applyTick,
  brokerSymbol,
  interleave,
  parseTimestamp,
  summarize,
  type EngineEvent,
  type EngineState,
  type Quote,
  type ReplaySignal,
  type ReplayTick,
  type SymbolMap,
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
  /** Milliseconds from a signal's receipt to its replay (`--latency`): what a slower path would have made of it. */
  latency: number;
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
  const latencyText = options.latency ?? '0';
  const latency = Number(latencyText);
  if (!/^\d+$/.test(latencyText.trim()) || !Number.isSafeInteger(latency)) {
    return fail(`--latency must be a whole number of milliseconds, 0 or more, got "${latencyText}"`);
  }
  return { ok: true, period: { sourceId, since, until, latency } };
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
    const lines = replayLines(settings, records, period.latency, { accountId: source.accountId, sourceId: source.id });
    const trades = lines.trades;
    const options = { from, until, startingEquity: settings.balance };
    const statistics = ledgerStatistics(trades, options);
    for (const trade of trades) lines.out.push(JSON.stringify({ type: 'trade', ...trade }));
    lines.out.push(JSON.stringify({ type: 'statistics', of: 'replay', ...statistics }));
    const real = await recordedLedgerTrades(store, { accountId: source.accountId, sourceId: source.id, from, until });
    if (real === null) {
      lines.out.push(
        JSON.stringify({
          type: 'ledger',
          available: false,
          reason: 'the ledger holds no fill of this account, so the replay is shown alone',
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

/**
 * Each signal's quote when it was received (the last tick of its symbol at or before then), which
 * is not the one it is applied at when `--latency` delays it.
 */
function quotesAtReceipt(
  ticks: readonly ReplayTick[],
  symbolMap: SymbolMap,
  records: readonly SignalRecord[],
): (Quote | null)[] {
  const bySymbol = new Map<string, ReplayTick[]>();
  // interleave's order: by time, the file's order kept among equal times.
  for (const tick of [...ticks].sort((a, b) => a.time - b.time)) {
    const list = bySymbol.get(tick.symbol) ?? [];
    list.push(tick);
    bySymbol.set(tick.symbol, list);
  }
  return records.map((record) => {
    const mine = bySymbol.get(brokerSymbol(symbolMap, record.signal!.symbol)) ?? [];
    const at = Date.parse(record.receivedAt);
    let found: ReplayTick | null = null;
    for (const tick of mine) {
      if (tick.time > at) break;
      found = tick;
    }
    return found === null ? null : { bid: found.bid, ask: found.ask };
  });
}

/** The replay itself: events and summary lines, and the trades it made. Pure but for its input. */
function replayLines(
  settings: ReplaySettings,
  records: readonly SignalRecord[],
  latency: number,
  owner: { accountId: string; sourceId: string },
): { out: string[]; trades: ReturnType<typeof replayTrades> } {
  // The signal's place in `records` rides in `line` (1-based), so interleave keeps the log's order.
  const signals: ReplaySignal[] = records.map((r, i) => ({
    time: Date.parse(r.receivedAt) + latency,
    text: r.rawBody,
    line: i + 1,
  }));
  const steps = interleave(settings.ticks, signals);
  let state: EngineState = replayState(settings);
  const atReceipt = quotesAtReceipt(settings.ticks, state.config.symbolMap, records);
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
      const quote = atReceipt[step.line - 1] ?? null;
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
