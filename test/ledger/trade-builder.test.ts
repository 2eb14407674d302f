import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { RecordedBust } from '../../src/ledger/ledger-bust.js';
import type { RecordedFill, RecordedFunding } from '../../src/ledger/recorded-fill.js';
import { buildTrades } from '../../src/ledger/trade-builder.js';

function fill(
  over: Partial<RecordedFill> & Pick<RecordedFill, 'venueFillId' | 'side' | 'lots' | 'price' | 'at'>,
): RecordedFill {
  return {
    orderId: `o-${over.venueFillId}`,
    symbol: 'BTCUSDT',
    fee: 0,
    feeCurrency: 'USDT',
    signalId: null,
    agentId: 'agt_1',
    accountId: 'acc_1',
    sourceId: null,
    strategy: null,
    receivedAt: null,
    ...over,
  };
}

describe('trades from fills', () => {
  it('a long opened in two partial fills and closed in one fill makes two trades, first in first out', () => {
    // Bought 0.3 at 100 (fee 0.03) and 0.2 at 101 (fee 0.02), sold 0.5 at 110 (fee 0.055).
    const trades = buildTrades([
      fill({
        venueFillId: 'f1',
        side: 'buy',
        lots: 0.3,
        price: 100,
        fee: 0.03,
        at: '2026-12-01T10:00:00.000Z',
        signalId: 'sig_a',
        sourceId: 'src_1',
        strategy: 'breakout',
      }),
      fill({
        venueFillId: 'f2',
        side: 'buy',
        lots: 0.2,
        price: 101,
        fee: 0.02,
        at: '2026-12-01T10:00:01.000Z',
        signalId: 'sig_a',
        sourceId: 'src_1',
        strategy: 'breakout',
      }),
      fill({
        venueFillId: 'f3',
        side: 'sell',
        lots: 0.5,
        price: 110,
        fee: 0.055,
        at: '2026-12-01T11:00:00.000Z',
        signalId: 'sig_b',
      }),
    ]);
    expect(trades).toHaveLength(2);
    // First: 0.3 × (110 − 100) = 3; fees 0.03 + 0.055 × 0.3/0.5 = 0.063; net 2.937.
    expect(trades[0]).toMatchObject({
      id: 'agt_1:f1:f3',
      side: 'long',
      lots: 0.3,
      entryPrice: 100,
      exitPrice: 110,
      fees: 0.063,
      realizedProfit: 2.937,
      openingSignalId: 'sig_a',
      closingSignalIds: ['sig_b'],
      sourceId: 'src_1',
      strategy: 'breakout',
    });
    // Second: 0.2 × (110 − 101) = 1.8; fees 0.02 + 0.022 = 0.042; net 1.758.
    expect(trades[1]).toMatchObject({ id: 'agt_1:f2:f3', lots: 0.2, fees: 0.042, realizedProfit: 1.758 });
  });

  it('a partial close splits a trade: the closed part is a trade, the rest stays open', () => {
    // Sold short 1 at 50 (fee 0.5); bought back 0.4 at 45 (fee 0.2); 0.6 still open.
    const trades = buildTrades([
      fill({ venueFillId: 's1', side: 'sell', lots: 1, price: 50, fee: 0.5, at: '2026-12-01T10:00:00.000Z' }),
      fill({ venueFillId: 'b1', side: 'buy', lots: 0.4, price: 45, fee: 0.2, at: '2026-12-01T10:30:00.000Z' }),
    ]);
    // Closed part: 0.4 × (50 − 45) = 2; fees 0.5 × 0.4 + 0.2 = 0.4; net 1.6.
    expect(trades.find((t) => t.exitAt !== null)).toMatchObject({
      side: 'short',
      lots: 0.4,
      fees: 0.4,
      realizedProfit: 1.6,
    });
    // Open part: 0.6 lots, the rest of the opening fee (0.3), no profit yet.
    expect(trades.find((t) => t.exitAt === null)).toMatchObject({
      id: 'agt_1:s1',
      lots: 0.6,
      fees: 0.3,
      realizedProfit: null,
    });
  });

  it('positions held apart: a closing fill closes only the side it names, and booked profit and funding count', () => {
    const funding: RecordedFunding[] = [
      // Paid 0.9 while 0.1 long and 0.2 short were open: 0.3 to the long, 0.6 to the short.
      {
        venueFundingId: 'fu1',
        symbol: 'BTCUSDT',
        amount: -0.9,
        currency: 'USDT',
        at: '2026-12-01T12:00:00.000Z',
        agentId: 'agt_1',
        accountId: 'acc_1',
      },
    ];
    const trades = buildTrades(
      [
        fill({ venueFillId: 'l', side: 'buy', lots: 0.1, price: 100, at: '2026-12-01T10:00:00.000Z', effect: 'open' }),
        fill({ venueFillId: 's', side: 'sell', lots: 0.2, price: 99, at: '2026-12-01T11:00:00.000Z', effect: 'open' }),
        // Closes the long (not the short): booked profit 7.5 in the account currency.
        fill({
          venueFillId: 'lc',
          side: 'sell',
          lots: 0.1,
          price: 101,
          at: '2026-12-01T13:00:00.000Z',
          effect: 'close',
          profit: 7.5,
        }),
      ],
      funding,
    );
    expect(trades.find((t) => t.side === 'long')).toMatchObject({ funding: -0.3, realizedProfit: 7.2, exitPrice: 101 });
    expect(trades.find((t) => t.side === 'short')).toMatchObject({ funding: -0.6, realizedProfit: null, lots: 0.2 });
  });

  it('a close of lots the ledger never saw opened makes no trade; the same fills give the same trades', () => {
    const fills = [
      fill({ venueFillId: 'x', side: 'sell', lots: 1, price: 10, at: '2026-12-01T10:00:00.000Z', effect: 'close' }),
    ];
    expect(buildTrades(fills)).toEqual([]);
    const again = [fill({ venueFillId: 'a', side: 'buy', lots: 2, price: 10, at: '2026-12-01T10:00:00.000Z' })];
    expect(buildTrades(again)).toEqual(buildTrades(again));
  });

  describe('busts', () => {
    // Bought 0.2 at 100 (fee 0.02); a stop sold 0.1 at 110 (fee 0.01).
    const entry = fill({
      venueFillId: 'e',
      side: 'buy',
      lots: 0.2,
      price: 100,
      fee: 0.02,
      at: '2026-12-01T10:00:00.000Z',
    });
    const exit = fill({
      venueFillId: 'x',
      side: 'sell',
      lots: 0.1,
      price: 110,
      fee: 0.01,
      at: '2026-12-01T11:00:00.000Z',
      effect: 'close',
    });
    const bust = (venueFillId: string, lots: number): RecordedBust => ({
      venueFillId,
      lots,
      at: '2026-12-01T12:00:00.000Z',
      agentId: 'agt_1',
      accountId: 'acc_1',
    });

    it('a busted exit: its lots are open again, the trade it closed is gone', () => {
      // Before: 0.1 × (110 − 100) = 1; fees 0.01 + 0.01 = 0.02; net 0.98; 0.1 open.
      expect(buildTrades([entry, exit]).map((t) => [t.id, t.lots, t.realizedProfit])).toEqual([
        ['agt_1:e', 0.1, null],
        ['agt_1:e:x', 0.1, 0.98],
      ]);
      const trades = buildTrades([entry, exit], [], [bust('x', 0.1)]);
      expect(trades).toEqual([
        expect.objectContaining({ id: 'agt_1:e', lots: 0.2, fees: 0.02, exitAt: null, realizedProfit: null }),
      ]);
    });

    it('part of an exit busted: the trade closes the lots left, with that share of its fee', () => {
      // 0.04 of the 0.1 taken back: 0.06 × 10 = 0.6; fees 0.02 × 0.3 + 0.01 × 0.6 = 0.012; net 0.588.
      expect(buildTrades([entry, exit], [], [bust('x', 0.04)])).toEqual([
        expect.objectContaining({ id: 'agt_1:e', lots: 0.14, fees: 0.014, realizedProfit: null }),
        expect.objectContaining({ id: 'agt_1:e:x', lots: 0.06, fees: 0.012, realizedProfit: 0.588 }),
      ]);
    });

    it("a busted entry: its trade is gone; another agent's fill of that id is not busted", () => {
      expect(buildTrades([entry], [], [bust('e', 0.2)])).toEqual([]);
      const other = { ...entry, agentId: 'agt_2' };
      expect(buildTrades([entry, other], [], [bust('e', 0.2)]).map((t) => t.id)).toEqual(['agt_2:e']);
    });

    it('a fill busted whole gives the trades of the fills without it (property)', () => {
      const fills = fc.array(
        fc.record({
          side: fc.constantFrom('buy' as const, 'sell' as const),
          lots: fc.integer({ min: 1, max: 5 }),
          price: fc.integer({ min: 90, max: 110 }),
        }),
        { minLength: 1, maxLength: 8 },
      );
      fc.assert(
        fc.property(fills, fc.nat(), (drawn, pick) => {
          const all = drawn.map((d, i) =>
            fill({ venueFillId: `f${i}`, ...d, at: new Date(Date.UTC(2026, 11, 1, 10, i)).toISOString() }),
          );
          const busted = all[pick % all.length]!;
          const without = all.filter((f) => f !== busted);
          expect(buildTrades(all, [], [bust(busted.venueFillId, busted.lots)])).toEqual(buildTrades(without));
        }),
      );
    });
  });
});
