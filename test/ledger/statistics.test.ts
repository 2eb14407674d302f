import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LedgerTrade } from '../../src/ledger/ledger-trade.js';
import { ledgerStatistics, statisticsBy } from '../../src/ledger/statistics.js';

function trade(id: string, exitAt: string | null, realizedProfit: number | null, more: Partial<LedgerTrade> = {}) {
  const t: LedgerTrade = {
    id,
    agentId: 'agt_1',
    accountId: 'acc_1',
    sourceId: 'src_a',
    strategy: null,
    symbol: 'EURUSD',
    side: 'long',
    lots: 0.1,
    entryAt: '2026-11-01T09:00:00.000Z',
    entryPrice: 1.1,
    exitAt,
    exitPrice: exitAt === null ? null : 1.1,
    fees: 0,
    funding: 0,
    realizedProfit,
    openingSignalId: null,
    closingSignalIds: [],
    quoteAtReceipt: null,
    receivedAt: null,
    firstFillAt: null,
    ...more,
  };
  return t;
}

// The fixed set, in no particular order. Profits are net of fees and funding.
const SET: LedgerTrade[] = [
  trade('t4', '2026-11-05T10:00:00.000Z', 200, { sourceId: 'src_b', strategy: 'breakout' }),
  trade('t1', '2026-11-02T10:00:00.000Z', 100, { fees: 2, strategy: 'breakout' }),
  trade('t3', '2026-11-04T10:00:00.000Z', -80, { funding: -1.5 }),
  trade('t6', null, null),
  trade('t2', '2026-11-03T10:00:00.000Z', -50, { fees: 0.5, sourceId: 'src_b' }),
  trade('t7', '2026-11-07T10:00:00.000Z', 0),
  trade('t5', '2026-11-06T10:00:00.000Z', -150, { strategy: 'breakout' }),
];

describe('ledger statistics, figures computed by hand', () => {
  it('computes every figure of a fixed set of trades', () => {
    const s = ledgerStatistics(SET, { startingEquity: 1000 });
    // Closed: t1..t5, t7 = 6 trades; t6 is open.
    expect(s.trades).toBe(6);
    expect(s.openTrades).toBe(1);
    // Wins t1 (+100), t4 (+200); losses t2 (-50), t3 (-80), t5 (-150); t7 (0) is neither.
    expect(s.wins).toBe(2);
    expect(s.losses).toBe(3);
    expect(s.winRate).toBeCloseTo(2 / 6, 12);
    // Gross profit 100 + 200 = 300; gross loss 50 + 80 + 150 = 280; net 300 - 280 = 20.
    expect(s.grossProfit).toBe(300);
    expect(s.grossLoss).toBe(280);
    expect(s.netProfit).toBe(20);
    // Average win 300 / 2 = 150; average loss -280 / 3 = -93.33333333.
    expect(s.averageWin).toBe(150);
    expect(s.averageLoss).toBe(-93.33333333);
    // Profit factor 300 / 280 = 1.0714285714…
    expect(s.profitFactor).toBeCloseTo(1.0714285714, 9);
    expect(s.largestLoss).toBe(-150);
    // Fees 2 + 0.5 = 2.5; funding -1.5 (already inside the profits).
    expect(s.fees).toBe(2.5);
    expect(s.funding).toBe(-1.5);
    // Equity: 1000 (at the first entry), after t1 1100, t2 1050, t3 970, t4 1170, t5 1020, t7 1020.
    expect(s.equityCurve).toEqual([
      { time: '2026-11-01T09:00:00.000Z', equity: 1000 },
      { time: '2026-11-02T10:00:00.000Z', equity: 1100 },
      { time: '2026-11-03T10:00:00.000Z', equity: 1050 },
      { time: '2026-11-04T10:00:00.000Z', equity: 970 },
      { time: '2026-11-05T10:00:00.000Z', equity: 1170 },
      { time: '2026-11-06T10:00:00.000Z', equity: 1020 },
      { time: '2026-11-07T10:00:00.000Z', equity: 1020 },
    ]);
    // Falls: 1100 → 970 = 130 (11.82 %); 1170 → 1020 = 150 (150 / 1170 = 12.8205 %). The largest: 150.
    expect(s.maxDrawdown.amount).toBe(150);
    expect(s.maxDrawdown.percent).toBeCloseTo(12.8205128205, 8);
    expect(s.maxDrawdown.peakAt).toBe('2026-11-05T10:00:00.000Z');
    expect(s.maxDrawdown.troughAt).toBe('2026-11-06T10:00:00.000Z');
  });

  it('keeps to the period: from included, until excluded, by exit time', () => {
    const s = ledgerStatistics(SET, {
      from: '2026-11-03T10:00:00.000Z',
      until: '2026-11-06T10:00:00.000Z',
      startingEquity: 1000,
    });
    // t2 (-50), t3 (-80), t4 (+200); t5 closes exactly at `until`, so it is out. Net 70.
    expect([s.trades, s.wins, s.losses, s.netProfit]).toEqual([3, 1, 2, 70]);
    // 1000 at `from`, then 950, 870, 1070: the fall 1000 → 870 = 130, 13 %.
    expect(s.equityCurve.map((p) => p.equity)).toEqual([1000, 950, 870, 1070]);
    expect(s.equityCurve[0]!.time).toBe('2026-11-03T10:00:00.000Z');
    expect(s.maxDrawdown).toEqual({
      amount: 130,
      percent: 13,
      peakAt: '2026-11-03T10:00:00.000Z',
      troughAt: '2026-11-04T10:00:00.000Z',
    });
    // Profit factor 200 / 130 = 1.538…
    expect(s.profitFactor).toBeCloseTo(200 / 130, 12);
  });

  it('leaves the profit factor and the loss figures empty without a loss, and the percent without a positive peak', () => {
    const noLoss = ledgerStatistics([trade('a', '2026-11-02T00:00:00Z', 10)]);
    expect([noLoss.profitFactor, noLoss.averageLoss, noLoss.largestLoss]).toEqual([null, null, null]);
    // From 0 (no starting equity) straight down: the fall is 25, the peak 0, so no percent.
    const down = ledgerStatistics([trade('a', '2026-11-02T00:00:00Z', -10), trade('b', '2026-11-03T00:00:00Z', -15)]);
    expect(down.maxDrawdown.amount).toBe(25);
    expect(down.maxDrawdown.percent).toBeNull();
    const none = ledgerStatistics([]);
    expect([none.trades, none.winRate, none.netProfit, none.equityCurve]).toEqual([0, null, 0, []]);
  });

  it('makes trades closing at the same instant one step, whatever their order', () => {
    // +10 and -10 at one time from 100: one point at 100, so no drawdown in either order.
    const a = trade('a', '2026-11-02T00:00:00Z', 10);
    const b = trade('b', '2026-11-02T00:00:00Z', -10);
    for (const set of [
      [a, b],
      [b, a],
    ]) {
      const s = ledgerStatistics(set, { startingEquity: 100 });
      expect(s.equityCurve.map((p) => p.equity)).toEqual([100, 100]);
      expect(s.maxDrawdown.amount).toBe(0);
    }
  });

  it('groups by source, strategy and account, null keys last', () => {
    const bySource = statisticsBy(SET, 'source');
    // src_a: t1 +100, t3 -80, t5 -150, t7 0 = -130; src_b: t2 -50, t4 +200 = 150.
    expect(bySource.map((g) => [g.key, g.statistics.trades, g.statistics.netProfit])).toEqual([
      ['src_a', 4, -130],
      ['src_b', 2, 150],
    ]);
    // breakout: t1 +100, t4 +200, t5 -150 = 150; no label: t2, t3, t7 = -130.
    expect(statisticsBy(SET, 'strategy').map((g) => [g.key, g.statistics.netProfit])).toEqual([
      ['breakout', 150],
      [null, -130],
    ]);
    expect(statisticsBy(SET, 'account').map((g) => [g.key, g.statistics.netProfit])).toEqual([['acc_1', 20]]);
  });
});

const DAYS = ['2026-11-01', '2026-11-02', '2026-11-03'];
const arbitraryTrades = fc
  .array(
    fc.record({
      // Few distinct times, so equal exit times are common.
      day: fc.constantFrom(...DAYS),
      hour: fc.integer({ min: 10, max: 12 }),
      cents: fc.integer({ min: -50_000, max: 50_000 }),
      open: fc.boolean(),
      source: fc.constantFrom('src_a', 'src_b', null),
    }),
    { maxLength: 40 },
  )
  .map((rows) =>
    rows.map((r, i) =>
      trade(
        `t${i}`,
        r.open && i % 3 === 0 ? null : `${r.day}T${r.hour}:00:00.000Z`,
        r.open && i % 3 === 0 ? null : r.cents / 100,
        {
          sourceId: r.source,
        },
      ),
    ),
  );

describe('ledger statistics, properties', () => {
  it('net profit is the sum of the closed trades, and wins and losses add up', () => {
    fc.assert(
      fc.property(arbitraryTrades, (trades) => {
        const s = ledgerStatistics(trades);
        const closed = trades.filter((t) => t.realizedProfit !== null);
        const sumCents = closed.reduce((sum, t) => sum + Math.round(t.realizedProfit! * 100), 0);
        expect(Math.round(s.netProfit * 100)).toBe(sumCents);
        expect(s.trades + s.openTrades).toBe(trades.length);
        expect(s.wins).toBe(closed.filter((t) => t.realizedProfit! > 0).length);
        expect(s.losses).toBe(closed.filter((t) => t.realizedProfit! < 0).length);
        expect(s.netProfit).toBeCloseTo(s.grossProfit - s.grossLoss, 6);
      }),
    );
  });

  it('the drawdown is the largest fall from an earlier point, at least 0 and at most the peak minus the low', () => {
    fc.assert(
      fc.property(arbitraryTrades, fc.integer({ min: 0, max: 100_000 }), (trades, start) => {
        const s = ledgerStatistics(trades, { startingEquity: start });
        const equities = s.equityCurve.map((p) => p.equity);
        let brute = 0;
        for (let i = 0; i < equities.length; i++) {
          for (let j = i + 1; j < equities.length; j++) brute = Math.max(brute, equities[i]! - equities[j]!);
        }
        expect(s.maxDrawdown.amount).toBeGreaterThanOrEqual(0);
        expect(s.maxDrawdown.amount).toBeCloseTo(brute, 6);
        if (equities.length > 0) {
          expect(s.maxDrawdown.amount).toBeLessThanOrEqual(Math.max(...equities) - Math.min(...equities) + 1e-6);
        }
        // The percent is of the peak fallen from, so only a fall from a peak above 0 has one.
        if (s.maxDrawdown.percent !== null) expect(s.maxDrawdown.percent).toBeGreaterThan(0);
        if (start > 0 && s.maxDrawdown.amount > 0) expect(s.maxDrawdown.percent).not.toBeNull();
      }),
    );
  });

  it('the profit factor agrees with the wins and losses', () => {
    fc.assert(
      fc.property(arbitraryTrades, (trades) => {
        const s = ledgerStatistics(trades);
        if (s.losses === 0) {
          expect(s.profitFactor).toBeNull();
          return;
        }
        expect(s.profitFactor).toBeCloseTo(s.grossProfit / s.grossLoss, 9);
        if (s.wins === 0) expect(s.profitFactor).toBe(0);
        expect(s.profitFactor! > 1).toBe(s.netProfit > 0);
        expect(s.averageLoss! * s.losses).toBeCloseTo(-s.grossLoss, 4);
      }),
    );
  });

  it('the order of the trades changes nothing, among equal exit times included', () => {
    fc.assert(
      fc.property(
        arbitraryTrades.chain((trades) =>
          fc.tuple(fc.constant(trades), fc.shuffledSubarray(trades, { minLength: trades.length })),
        ),
        ([trades, shuffled]) => {
          expect(ledgerStatistics(shuffled, { startingEquity: 500 })).toEqual(
            ledgerStatistics(trades, { startingEquity: 500 }),
          );
          expect(statisticsBy(shuffled, 'source')).toEqual(statisticsBy(trades, 'source'));
        },
      ),
    );
  });
});
