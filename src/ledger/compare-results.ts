/**
 * A replay's result beside the ledger's real one for the same period: the headline figures of
 * each and their difference (replay − ledger), and per opening signal what each side made of it,
 * so a gap is traced to the signals where it arose. Pure.
 */
import type { LedgerTrade } from './ledger-trade.js';
import type { LedgerStatistics } from './statistics.js';

export interface Headline {
  trades: number;
  netProfit: number;
  winRate: number | null;
  profitFactor: number | null;
  maxDrawdown: number;
}

export interface SignalResult {
  /** The signal that opened the trades; null for trades opened without one. */
  openingSignalId: string | null;
  /** Closed trades and their net profit, per side; null when that side has no trade of the signal. */
  replay: { trades: number; netProfit: number } | null;
  ledger: { trades: number; netProfit: number } | null;
}

export interface ResultComparison {
  replay: Headline;
  ledger: Headline;
  /** replay − ledger, figure by figure; null where either side's figure is null. */
  difference: { [K in keyof Headline]: number | null };
  signals: SignalResult[];
}

function headline(s: LedgerStatistics): Headline {
  return {
    trades: s.trades,
    netProfit: s.netProfit,
    winRate: s.winRate,
    profitFactor: s.profitFactor,
    maxDrawdown: s.maxDrawdown.amount,
  };
}

function perSignal(trades: readonly LedgerTrade[]): Map<string | null, { trades: number; netProfit: number }> {
  const bySignal = new Map<string | null, { trades: number; netProfit: number }>();
  for (const trade of trades) {
    if (trade.realizedProfit === null) continue;
    const sum = bySignal.get(trade.openingSignalId) ?? { trades: 0, netProfit: 0 };
    sum.trades += 1;
    sum.netProfit = Math.round((sum.netProfit + trade.realizedProfit) * 1e8) / 1e8;
    bySignal.set(trade.openingSignalId, sum);
  }
  return bySignal;
}

/** The two results side by side; the trades are those the statistics were computed from. */
export function compareResults(
  replay: { trades: readonly LedgerTrade[]; statistics: LedgerStatistics },
  ledger: { trades: readonly LedgerTrade[]; statistics: LedgerStatistics },
): ResultComparison {
  const a = headline(replay.statistics);
  const b = headline(ledger.statistics);
  const minus = (x: number | null, y: number | null) =>
    x === null || y === null ? null : Math.round((x - y) * 1e8) / 1e8;
  const mine = perSignal(replay.trades);
  const theirs = perSignal(ledger.trades);
  const ids = [...new Set([...mine.keys(), ...theirs.keys()])];
  return {
    replay: a,
    ledger: b,
    difference: {
      trades: a.trades - b.trades,
      netProfit: minus(a.netProfit, b.netProfit),
      winRate: minus(a.winRate, b.winRate),
      profitFactor: minus(a.profitFactor, b.profitFactor),
      maxDrawdown: minus(a.maxDrawdown, b.maxDrawdown),
    },
    signals: ids.map((id) => ({ openingSignalId: id, replay: mine.get(id) ?? null, ledger: theirs.get(id) ?? null })),
  };
}
