import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  distribution,
  latencyAndSlippage,
  median,
  nearestRank,
  tradePath,
} from '../../src/ledger/latency-and-slippage.js';
import type { LedgerTrade } from '../../src/ledger/ledger-trade.js';

function trade(id: string, more: Partial<LedgerTrade>): LedgerTrade {
  return {
    id,
    agentId: 'agt_1',
    accountId: 'acc_1',
    sourceId: 'src_a',
    strategy: null,
    symbol: 'EURUSD',
    side: 'long',
    lots: 0.1,
    entryAt: '2026-11-02T10:00:00.150Z',
    entryPrice: 1.1,
    exitAt: null,
    exitPrice: null,
    fees: 0,
    funding: 0,
    realizedProfit: null,
    openingSignalId: `sig_${id}`,
    closingSignalIds: [],
    quoteAtReceipt: null,
    receivedAt: null,
    firstFillAt: null,
    ...more,
  };
}

const SET: LedgerTrade[] = [
  // Long EURUSD: quote 1.10000, filled 1.10012, 0.00012 worse = 1.2 pips; 150 ms.
  trade('a', {
    entryPrice: 1.10012,
    quoteAtReceipt: 1.1,
    receivedAt: '2026-11-02T10:00:00.000Z',
    firstFillAt: '2026-11-02T10:00:00.150Z',
  }),
  // Short EURUSD: quote 1.10050, sold at 1.10060, 0.0001 better = -1 pip; 40 ms.
  trade('b', {
    side: 'short',
    entryPrice: 1.1006,
    quoteAtReceipt: 1.1005,
    receivedAt: '2026-11-02T11:00:00.000Z',
    firstFillAt: '2026-11-02T11:00:00.040Z',
    agentId: 'agt_2',
  }),
  // Long USDJPY: quote 150.000, filled 150.020, pip 0.01: 2 pips; 900 ms.
  trade('c', {
    symbol: 'USDJPY',
    entryPrice: 150.02,
    quoteAtReceipt: 150,
    receivedAt: '2026-11-02T12:00:00.000Z',
    firstFillAt: '2026-11-02T12:00:00.900Z',
  }),
  // No quote at receipt and no receipt: no slippage, no latency (a trade opened by hand).
  trade('d', { sourceId: null }),
];

describe('latency and slippage, figures computed by hand', () => {
  it('signs slippage so that above 0 is worse for the trader, in price and in pips', () => {
    expect(tradePath(SET[0]!)).toMatchObject({ latencyMs: 150, slippage: 0.00012, slippagePips: 1.2 });
    expect(tradePath(SET[1]!)).toMatchObject({ latencyMs: 40, slippage: -0.0001, slippagePips: -1 });
    expect(tradePath(SET[2]!)).toMatchObject({ latencyMs: 900, slippage: 0.02, slippagePips: 2 });
    expect(tradePath(SET[3]!)).toMatchObject({ latencyMs: null, slippage: null, slippagePips: null });
    // An instrument the catalog does not know has no pip: price only, unless the overrides give one.
    const unknown = trade('e', { symbol: 'FOOBAR', entryPrice: 12.5, quoteAtReceipt: 12 });
    expect(tradePath(unknown)).toMatchObject({ slippage: 0.5, slippagePips: null });
    const known = { FOOBAR: { pipSize: 0.1, contractSize: 1, quoteCurrency: 'USD' } };
    expect(tradePath(unknown, known)).toMatchObject({ slippagePips: 5 });
  });

  it('summarizes per source with the median and the nearest-rank 95th percentile', () => {
    const [a, none] = latencyAndSlippage(SET, 'source');
    // src_a: latencies 40, 150, 900: median 150; p95 rank ⌈0.95 × 3⌉ = 3 → 900.
    expect(a!.key).toBe('src_a');
    expect(a!.latencyMs).toEqual({ count: 3, median: 150, p95: 900 });
    // Pips -1, 1.2, 2: median 1.2, p95 2. Two symbols, so no summary in price.
    expect(a!.slippagePips).toEqual({ count: 3, median: 1.2, p95: 2 });
    expect(a!.slippage).toBeNull();
    // The trade without a source: counted, with nothing to summarize.
    expect(none).toMatchObject({ key: null, trades: 1, latencyMs: { count: 0, median: null, p95: null } });
  });

  it('summarizes per venue (agent) and per symbol', () => {
    const byVenue = latencyAndSlippage(SET, 'venue');
    expect(byVenue.map((g) => [g.key, g.trades])).toEqual([
      ['agt_1', 3],
      ['agt_2', 1],
    ]);
    const eurusd = latencyAndSlippage(SET, 'symbol').find((g) => g.key === 'EURUSD')!;
    // Latencies 40, 150: median (40 + 150) / 2 = 95; p95 rank ⌈1.9⌉ = 2 → 150.
    expect(eurusd.latencyMs).toEqual({ count: 2, median: 95, p95: 150 });
    // Price -0.0001, 0.00012: median 0.00001 (one symbol, so summarized in price too).
    expect(eurusd.slippage).toEqual({ count: 2, median: 0.00001, p95: 0.00012 });
  });

  it('keeps to the period by the time of receipt', () => {
    const [a] = latencyAndSlippage(SET, 'source', { from: '2026-11-02T10:30:00Z', until: '2026-11-02T12:00:00Z' });
    // Only b (11:00) is in; c at 12:00 is at `until`, out; d has no receipt and entered at 10:00, out.
    expect(a!.paths.map((p) => p.tradeId)).toEqual(['b']);
  });
});

describe('percentiles', () => {
  it('takes the 95th percentile by nearest rank: the largest below 20 values, the 19th of 20', () => {
    const twenty = Array.from({ length: 20 }, (_, i) => i + 1);
    expect(nearestRank(twenty, 95)).toBe(19);
    expect(nearestRank([5, 7], 95)).toBe(7);
    expect(nearestRank([], 95)).toBeNull();
    expect(median([1, 2, 3, 10])).toBe(2.5);
  });

  it('is a value that occurred, at least the median, at most the largest (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -1000, max: 1000 }), { minLength: 1 }), (values) => {
        const d = distribution(values);
        expect(values).toContain(d.p95);
        expect(d.p95!).toBeGreaterThanOrEqual(d.median!);
        expect(d.p95!).toBeLessThanOrEqual(Math.max(...values));
        // At least 95 % of the values are at or below it, and fewer below the value before it.
        expect(values.filter((v) => v <= d.p95!).length).toBeGreaterThanOrEqual(0.95 * values.length);
      }),
    );
  });
});
