import { floorToStep } from '../../../engine/index.js';
import type { VenueOrder } from '../../venue.js';

/**
 * A spot buy whose exchange takes its commission from the coins bought (Binance without BNB):
 * the account keeps `filled` less that fee, and the exchange sells only whole lot steps, so the
 * position is what is kept rounded down to the step; the rest (dust) stays the trader's. The
 * order with `feeInCoin` set when the fills carry a fee in `base`; as given when they carry
 * none in it (paid in the quote coin or BNB); `unknown` when its fills do not cover its lots
 * (the order answer listed none and they were not read): the fee cannot be told, and a position
 * of `filled` would be more than the account holds.
 */
export function netOfCoinFee(order: VenueOrder, base: string, lotStep: number): VenueOrder | 'unknown' {
  const { feeInCoin: _, ...plain } = order;
  if (order.side !== 'buy' || !(order.filled > 0)) return plain;
  const covered = order.fills.reduce((sum, fill) => sum + fill.volume, 0);
  if (order.fills.length === 0 || covered < order.filled - lotStep / 2) return 'unknown';
  const fee = roundCoins(order.fills.reduce((sum, fill) => sum + (fill.fee?.currency === base ? fill.fee.cost : 0), 0));
  if (!(fee > 0)) return plain;
  const left = roundCoins(order.filled - fee);
  const kept = Math.max(0, floorToStep(left, lotStep));
  return { ...plain, feeInCoin: { kept, fee, coin: base, dust: roundCoins(left - kept) } };
}

/** Coins to 8 decimals, the finest any exchange counts, without floating-point tails. */
function roundCoins(value: number): number {
  return Number(value.toFixed(8));
}
