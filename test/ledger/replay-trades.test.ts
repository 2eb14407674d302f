import { describe, expect, it } from 'vitest';
import { compareResults } from '../../src/ledger/compare-results.js';
import { replayTrades, type ReplayedSignal } from '../../src/ledger/replay-trades.js';
import { ledgerStatistics } from '../../src/ledger/statistics.js';

const T = Date.parse('2026-11-02T10:00:00.000Z');
const signal = (id: string, at: number, quote: { bid: number; ask: number } | null = null): ReplayedSignal => ({
  id,
  sourceId: 'src_a',
  accountId: 'acc_1',
  receivedAt: new Date(at).toISOString(),
  quote,
});
const owner = { agentId: 'replay', accountId: 'acc_1', sourceId: 'src_a' };

describe('the trades of a replay', () => {
  it('makes a pending entry a trade of the signal that placed it, filled at its own price without slippage', () => {
    const trades = replayTrades(
      [
        {
          signal: signal('sig_1', T, { bid: 1.105, ask: 1.1052 }),
          events: [
            {
              type: 'order_placed',
              time: T,
              order: 1,
              symbol: 'EURUSD',
              side: 'buy',
              kind: 'limit',
              volume: 0.1,
              price: 1.104,
              comment: 'dip',
            },
          ],
        },
        { signal: null, events: [{ type: 'order_filled', time: T + 5000, order: 1, position: 2, price: 1.104 }] },
        {
          signal: null,
          events: [{ type: 'closed', time: T + 9000, position: 2, volume: 0.1, price: 1.1, profit: -40, reason: 'sl' }],
        },
      ],
      owner,
    );
    expect(trades).toEqual([
      expect.objectContaining({
        symbol: 'EURUSD',
        side: 'long',
        lots: 0.1,
        strategy: 'dip',
        entryPrice: 1.104,
        entryAt: new Date(T + 5000).toISOString(),
        exitPrice: 1.1,
        realizedProfit: -40,
        openingSignalId: 'sig_1',
        closingSignalIds: [],
        quoteAtReceipt: null,
      }),
    ]);
  });

  it('sets the replay beside the ledger, signal by signal', () => {
    const replay = replayTrades(
      [
        {
          signal: signal('sig_1', T, { bid: 1.1, ask: 1.1002 }),
          events: [
            {
              type: 'opened',
              time: T,
              position: 1,
              symbol: 'EURUSD',
              side: 'buy',
              volume: 0.1,
              price: 1.1002,
              sl: null,
              tp: null,
              comment: null,
            },
          ],
        },
        {
          signal: signal('sig_2', T + 60_000),
          events: [
            { type: 'closed', time: T + 60_000, position: 1, volume: 0.1, price: 1.1012, profit: 10, reason: 'signal' },
          ],
        },
      ],
      owner,
    );
    // The real account filled 0.2 pips worse and closed at the same price: 8 instead of 10.
    const real = [{ ...replay[0]!, id: 'trd_1', entryPrice: 1.1004, realizedProfit: 8 }];
    const comparison = compareResults(
      { trades: replay, statistics: ledgerStatistics(replay) },
      { trades: real, statistics: ledgerStatistics(real) },
    );
    expect(comparison.difference).toEqual({ trades: 0, netProfit: 2, winRate: 0, profitFactor: null, maxDrawdown: 0 });
    expect(comparison.signals).toEqual([
      { openingSignalId: 'sig_1', replay: { trades: 1, netProfit: 10 }, ledger: { trades: 1, netProfit: 8 } },
    ]);
  });
});
