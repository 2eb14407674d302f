import { describe, expect, it } from 'vitest';
import type { VenueOrder } from '../../src/agent/venue.js';
import { netOfCoinFee } from '../../src/agent/venues/ccxt/spot-coin-fee.js';

/**
 * A spot buy whose commission the exchange takes from the coins bought (Binance without BNB):
 * the position is what the account keeps, rounded down to the lot step; the rest is dust.
 */
const order = (side: 'buy' | 'sell', filled: number, fills: VenueOrder['fills']): VenueOrder => ({
  id: '1',
  clientId: 'sg-1',
  symbol: 'BTC/USDT',
  side,
  kind: 'market',
  volume: filled,
  price: null,
  status: 'filled',
  filled,
  average: 50000,
  fills,
});
const fill = (volume: number, cost: number, currency: string) => ({
  price: 50000,
  volume,
  time: null,
  fee: { cost, currency },
});

describe('a spot buy net of the fee taken from the coins bought', () => {
  it('0.01 BTC at 0.1 %: 0.00999 kept, no dust', () => {
    expect(netOfCoinFee(order('buy', 0.01, [fill(0.01, 0.00001, 'BTC')]), 'BTC', 0.00001)).toMatchObject({
      filled: 0.01,
      feeInCoin: { kept: 0.00999, fee: 0.00001, coin: 'BTC', dust: 0 },
    });
  });

  it('0.0123 BTC in two fills: the fees summed, 0.01228 kept, 0.0000077 of dust', () => {
    const net = netOfCoinFee(
      order('buy', 0.0123, [fill(0.0023, 0.0000023, 'BTC'), fill(0.01, 0.00001, 'BTC')]),
      'BTC',
      0.00001,
    );
    expect(net).toMatchObject({ filled: 0.0123, feeInCoin: { kept: 0.01228, fee: 0.0000123, dust: 0.0000077 } });
  });

  it('a fee paid in BNB or the quote coin, and a sell, keep every lot', () => {
    expect(netOfCoinFee(order('buy', 0.01, [fill(0.01, 0.0006, 'BNB')]), 'BTC', 0.00001)).not.toHaveProperty(
      'feeInCoin',
    );
    expect(netOfCoinFee(order('sell', 0.01, [fill(0.01, 0.5, 'USDT')]), 'BTC', 0.00001)).not.toHaveProperty(
      'feeInCoin',
    );
  });

  it('fills that do not cover the lots filled (none listed, none read): the fee cannot be told', () => {
    expect(netOfCoinFee(order('buy', 0.01, []), 'BTC', 0.00001)).toBe('unknown');
    expect(netOfCoinFee(order('buy', 0.01, [fill(0.005, 0.000005, 'BTC')]), 'BTC', 0.00001)).toBe('unknown');
  });
});
