import { describe, expect, it } from 'vitest';
import { CcxtHeldState, WATCH_MS, WATCH_ONE_READ_MS } from '../../src/agent/venues/ccxt/ccxt-held-state.js';

/** Which symbols a CCXT agent keeps quoted in the background (docs/venues/ccxt.md, "Held data"). */
describe('the symbols a CCXT agent keeps quoted', () => {
  const t0 = Date.parse('2026-12-02T10:00:00Z');

  it('keeps a symbol asked for within 15 minutes, and drops it after', () => {
    const held = new CcxtHeldState();
    held.watch('BTC/USDT:USDT', t0);
    expect(held.watchedSymbols(t0 + WATCH_MS)).toEqual(['BTC/USDT:USDT']);
    expect(held.watchedSymbols(t0 + WATCH_MS + 1)).toEqual([]);
  });

  it('where one read quotes them all, keeps them a week: an hourly basket finds its quotes held', () => {
    const held = new CcxtHeldState();
    for (const symbol of ['BTC/USDT:USDT', 'ETH/USDT:USDT']) held.watch(symbol, t0);
    expect(held.watchedSymbols(t0 + 60 * 60_000, WATCH_ONE_READ_MS)).toEqual(['BTC/USDT:USDT', 'ETH/USDT:USDT']);
    expect(held.watchedSymbols(t0 + 7 * 86_400_000 + 1, WATCH_ONE_READ_MS)).toEqual([]);
  });

  it('keeps a symbol with a position, however long ago it was asked for', () => {
    const held = new CcxtHeldState();
    held.setPositions(
      [{ id: 'BTC/USDT:USDT long', symbol: 'BTC/USDT:USDT', side: 'buy', volume: 0.01, price: 50_000, protection: [] }],
      t0,
    );
    expect(held.watchedSymbols(t0 + 30 * 86_400_000)).toEqual(['BTC/USDT:USDT']);
  });
});
