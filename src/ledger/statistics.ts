/**
 * The ledger's figures over a period (docs/ledger.md, "Statistics"): what a set of closed trades
 * earned, how they were spread, and how deep the account fell on the way. Pure: trades in,
 * figures out. Every figure is in the trades' account currency, so a set must hold one
 * account's currency (group per account to compare accounts in different currencies).
 *
 * Definitions (docs/decisions/0043-ledger-statistics.md):
 * - a trade belongs to the period by its exit time, `from` included, `until` excluded; a trade
 *   still open (no exit or no realized profit) counts in `openTrades` and in no other figure;
 * - a win is a realized profit above 0, a loss one below 0; a trade at exactly 0 is neither;
 * - the equity curve is the starting equity plus the realized profits, one point per distinct
 *   exit time (trades closing at the same instant are one step, so their order cannot matter);
 * - the maximum drawdown is the largest fall of that curve from its highest point so far (the
 *   starting equity included) to a later point; its percent is of that highest point.
 */
import type { LedgerTrade } from './ledger-trade.js';

export interface StatisticsOptions {
  /** ISO time; trades closed at or after it. */
  from?: string;
  /** ISO time; trades closed before it. */
  until?: string;
  /** The equity the curve starts from (0 when absent: the curve is then the cumulative profit). */
  startingEquity?: number;
}

export interface EquityPoint {
  /** ISO time of the exits that make this step (the period's start, or the first entry, for the first point). */
  time: string;
  equity: number;
}

export interface Drawdown {
  /** The fall, as a positive amount (0 when the curve never falls). */
  amount: number;
  /** The fall as a percent of the peak it fell from; null when that peak is not above 0. */
  percent: number | null;
  /** When the curve stood at that peak and at the bottom of the fall; null when it never fell. */
  peakAt: string | null;
  troughAt: string | null;
}

export interface LedgerStatistics {
  /** Closed trades in the period. */
  trades: number;
  /** Trades of the period's set still open: in no other figure. */
  openTrades: number;
  wins: number;
  losses: number;
  /** wins / trades, 0 to 1; null without trades. */
  winRate: number | null;
  /** Sum of the realized profits (net of fees and funding). */
  netProfit: number;
  /** Sum of the wins. */
  grossProfit: number;
  /** Sum of the losses, as a positive amount. */
  grossLoss: number;
  /** grossProfit / wins; null without wins. */
  averageWin: number | null;
  /** The average loss, negative (-grossLoss / losses); null without losses. */
  averageLoss: number | null;
  /** grossProfit / grossLoss; null without a loss (it would be infinite, or 0/0). */
  profitFactor: number | null;
  /** The most negative realized profit; null without losses. */
  largestLoss: number | null;
  fees: number;
  funding: number;
  maxDrawdown: Drawdown;
  equityCurve: EquityPoint[];
}

/** A money figure without the float noise of long sums (0.1 + 0.2), to 1e-8 of the currency. */
function money(value: number): number {
  return Math.round(value * 1e8) / 1e8 + 0;
}

function inPeriod(time: number, options: StatisticsOptions): boolean {
  if (options.from !== undefined && time < Date.parse(options.from)) return false;
  if (options.until !== undefined && time >= Date.parse(options.until)) return false;
  return true;
}

/** The figures of the trades closed in the period (see the module's comment for the definitions). */
export function ledgerStatistics(trades: readonly LedgerTrade[], options: StatisticsOptions = {}): LedgerStatistics {
  const startingEquity = options.startingEquity ?? 0;
  const closed: { trade: LedgerTrade; exit: number; profit: number }[] = [];
  let openTrades = 0;
  for (const trade of trades) {
    if (trade.exitAt === null || trade.realizedProfit === null) {
      // An open trade belongs to the period when it was opened before the period's end.
      if (options.until === undefined || Date.parse(trade.entryAt) < Date.parse(options.until)) openTrades += 1;
      continue;
    }
    const exit = Date.parse(trade.exitAt);
    if (inPeriod(exit, options)) closed.push({ trade, exit, profit: trade.realizedProfit });
  }
  // Summed in one order whatever order the trades came in, so the totals are the same to the bit.
  closed.sort((a, b) => a.exit - b.exit || (a.trade.id < b.trade.id ? -1 : a.trade.id > b.trade.id ? 1 : 0));

  let grossProfit = 0;
  let grossLoss = 0;
  let wins = 0;
  let losses = 0;
  let largestLoss: number | null = null;
  let fees = 0;
  let funding = 0;
  for (const { trade, profit } of closed) {
    if (profit > 0) {
      wins += 1;
      grossProfit += profit;
    } else if (profit < 0) {
      losses += 1;
      grossLoss -= profit;
      if (largestLoss === null || profit < largestLoss) largestLoss = profit;
    }
    fees += trade.fees;
    funding += trade.funding;
  }

  const firstEntry = closed.reduce((min, c) => Math.min(min, Date.parse(c.trade.entryAt)), Infinity);
  const startTime =
    options.from ?? (closed.length > 0 ? new Date(Math.min(firstEntry, closed[0]!.exit)).toISOString() : null);
  const equityCurve: EquityPoint[] = startTime === null ? [] : [{ time: startTime, equity: money(startingEquity) }];
  let equity = startingEquity;
  for (let i = 0; i < closed.length; i++) {
    equity += closed[i]!.profit;
    // Trades closing at the same instant make one step: the point is written after the last of them.
    if (closed[i + 1]?.exit !== closed[i]!.exit) {
      equityCurve.push({ time: closed[i]!.trade.exitAt!, equity: money(equity) });
    }
  }

  const tradeCount = closed.length;
  return {
    trades: tradeCount,
    openTrades,
    wins,
    losses,
    winRate: tradeCount === 0 ? null : wins / tradeCount,
    netProfit: money(grossProfit - grossLoss),
    grossProfit: money(grossProfit),
    grossLoss: money(grossLoss),
    averageWin: wins === 0 ? null : money(grossProfit / wins),
    averageLoss: losses === 0 ? null : money(-grossLoss / losses),
    profitFactor: grossLoss === 0 ? null : grossProfit / grossLoss,
    largestLoss: largestLoss === null ? null : money(largestLoss),
    fees: money(fees),
    funding: money(funding),
    maxDrawdown: maxDrawdownOf(equityCurve),
    equityCurve,
  };
}

/** The largest peak-to-trough fall of the curve: each point against the highest point before it. */
export function maxDrawdownOf(curve: readonly EquityPoint[]): Drawdown {
  let best: Drawdown = { amount: 0, percent: null, peakAt: null, troughAt: null };
  let peak: EquityPoint | null = null;
  for (const point of curve) {
    if (peak === null || point.equity > peak.equity) {
      peak = point;
      continue;
    }
    const fall = money(peak.equity - point.equity);
    if (fall > best.amount) {
      best = {
        amount: fall,
        percent: peak.equity > 0 ? (fall / peak.equity) * 100 : null,
        peakAt: peak.time,
        troughAt: point.time,
      };
    }
  }
  return best;
}

export type TradeGrouping = 'source' | 'strategy' | 'account';

export interface GroupStatistics {
  /** The source id, the strategy label (the signal's comment) or the account id; null: trades without one. */
  key: string | null;
  statistics: LedgerStatistics;
}

const KEY_OF: Record<TradeGrouping, (trade: LedgerTrade) => string | null> = {
  source: (trade) => trade.sourceId,
  strategy: (trade) => trade.strategy,
  account: (trade) => trade.accountId,
};

/** Trades grouped by their source, strategy or account, in the order the keys sort (null last). */
export function groupTrades(trades: readonly LedgerTrade[], by: TradeGrouping): Map<string | null, LedgerTrade[]> {
  const groups = new Map<string | null, LedgerTrade[]>();
  for (const trade of trades) {
    const key = KEY_OF[by](trade);
    const group = groups.get(key);
    if (group === undefined) groups.set(key, [trade]);
    else group.push(trade);
  }
  const keys = [...groups.keys()].sort(compareKeys);
  return new Map(keys.map((key) => [key, groups.get(key)!]));
}

/** The statistics of each source's, strategy's or account's trades. */
export function statisticsBy(
  trades: readonly LedgerTrade[],
  by: TradeGrouping,
  options: StatisticsOptions = {},
): GroupStatistics[] {
  return [...groupTrades(trades, by)].map(([key, group]) => ({ key, statistics: ledgerStatistics(group, options) }));
}

export function compareKeys(a: string | null, b: string | null): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return a < b ? -1 : 1;
}
