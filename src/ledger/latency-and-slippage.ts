/**
 * What the path from alert to fill cost (docs/ledger.md, "Latency and slippage"): per trade the
 * time from the signal's receipt to the venue's first fill of its entry, and the slippage, the
 * entry price against the venue's quote when the signal was received, then summarized per group
 * by the median and the 95th percentile. Pure.
 *
 * Slippage is signed so that above 0 is worse for the trader: a long paid more than the quote
 * (entry − quote), a short sold for less (quote − entry). In pips (points, for indices) when the
 * instrument is known, so that symbols priced on different scales can be summarized together;
 * a group's price slippage mixes scales and is summarized only when it holds one symbol.
 *
 * Percentiles (docs/decisions/0043-ledger-statistics.md): the median is the middle value, the mean
 * of the two middle values for an even count; the 95th percentile is the nearest rank, the
 * smallest value at least 95 % of the values are at or below (with fewer than 20 values, the
 * largest), always a value that occurred.
 */
import { resolveInstrument, type InstrumentOverrides } from '../engine/index.js';
import type { LedgerTrade } from './ledger-trade.js';
import { compareKeys } from './statistics.js';

/** `venue`: the agent, one agent trading one venue account. */
export type PathGrouping = 'source' | 'venue' | 'account' | 'symbol';

export interface PathOptions {
  /** ISO time; trades whose signal was received at or after it (by entry when it has no receipt). */
  from?: string;
  /** ISO time; trades received before it. */
  until?: string;
  /** Instrument overrides of the catalog, for pip sizes of symbols it does not know. */
  instruments?: InstrumentOverrides;
}

/** One trade's path. */
export interface TradePath {
  tradeId: string;
  openingSignalId: string | null;
  symbol: string;
  /** firstFillAt − receivedAt in milliseconds; null when either is unknown. */
  latencyMs: number | null;
  /** In price; null without a quote at receipt. */
  slippage: number | null;
  /** In pips (points); null without a quote or when the instrument is unknown. */
  slippagePips: number | null;
}

export interface Distribution {
  /** How many values. */
  count: number;
  median: number | null;
  p95: number | null;
}

export interface PathSummary {
  key: string | null;
  trades: number;
  latencyMs: Distribution;
  slippagePips: Distribution;
  /** In price, only when the group holds one symbol (prices of different symbols do not add up); else null. */
  slippage: Distribution | null;
  paths: TradePath[];
}

/** The path of one trade (see the module's comment for the sign of slippage). */
export function tradePath(trade: LedgerTrade, instruments: InstrumentOverrides = {}): TradePath {
  const latencyMs =
    trade.receivedAt === null || trade.firstFillAt === null
      ? null
      : Date.parse(trade.firstFillAt) - Date.parse(trade.receivedAt);
  const raw =
    trade.quoteAtReceipt === null
      ? null
      : trade.side === 'long'
        ? trade.entryPrice - trade.quoteAtReceipt
        : trade.quoteAtReceipt - trade.entryPrice;
  const pipSize = resolveInstrument(trade.symbol, instruments)?.pipSize ?? null;
  return {
    tradeId: trade.id,
    openingSignalId: trade.openingSignalId,
    symbol: trade.symbol,
    latencyMs,
    // Rounded off the float noise of a difference of two prices (1.1003 − 1.1 = 0.00029999…).
    slippage: raw === null ? null : round(raw, 10),
    slippagePips: raw === null || pipSize === null ? null : round(raw / pipSize, 6),
  };
}

const KEY_OF: Record<PathGrouping, (trade: LedgerTrade) => string | null> = {
  source: (trade) => trade.sourceId,
  venue: (trade) => trade.agentId,
  account: (trade) => trade.accountId,
  symbol: (trade) => trade.symbol,
};

/** Each group's latency and slippage over the period, in the order the keys sort (null last). */
export function latencyAndSlippage(
  trades: readonly LedgerTrade[],
  groupBy: PathGrouping,
  options: PathOptions = {},
): PathSummary[] {
  const groups = new Map<string | null, TradePath[]>();
  for (const trade of trades) {
    const at = Date.parse(trade.receivedAt ?? trade.entryAt);
    if (options.from !== undefined && at < Date.parse(options.from)) continue;
    if (options.until !== undefined && at >= Date.parse(options.until)) continue;
    const key = KEY_OF[groupBy](trade);
    const group = groups.get(key) ?? [];
    group.push(tradePath(trade, options.instruments));
    groups.set(key, group);
  }
  return [...groups.keys()].sort(compareKeys).map((key) => {
    const paths = groups.get(key)!;
    const oneSymbol = new Set(paths.map((p) => p.symbol)).size === 1;
    return {
      key,
      trades: paths.length,
      latencyMs: distribution(paths.map((p) => p.latencyMs)),
      slippagePips: distribution(paths.map((p) => p.slippagePips)),
      slippage: oneSymbol ? distribution(paths.map((p) => p.slippage)) : null,
      paths,
    };
  });
}

/** Median and 95th percentile of the known values (nulls left out). */
export function distribution(values: readonly (number | null)[]): Distribution {
  const known = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  return { count: known.length, median: median(known), p95: nearestRank(known, 95) };
}

/** The middle value of sorted values; the mean of the two middle ones for an even count. */
export function median(sorted: readonly number[]): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  const mid = Math.floor(n / 2);
  return n % 2 === 1 ? sorted[mid]! : round((sorted[mid - 1]! + sorted[mid]!) / 2, 10);
}

/** The nearest-rank percentile of sorted values: the value at rank ⌈p/100 × n⌉ (1-based). */
export function nearestRank(sorted: readonly number[], p: number): number | null {
  const n = sorted.length;
  if (n === 0) return null;
  return sorted[Math.max(1, Math.ceil((p * n) / 100)) - 1]!;
}

function round(value: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f + 0;
}
