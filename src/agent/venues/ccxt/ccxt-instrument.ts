import type { Market } from 'ccxt';
import type { InstrumentSpec } from '../../../engine/index.js';

/**
 * The engine's instrument for an exchange market. One lot is one unit of what the exchange's
 * order amount counts: a coin of the base currency on a spot market (BTC of BTC/USDT), a
 * contract on a swap (whose size in coins is the market's contractSize). So `vol=1` buys one
 * BTC on BTC/USDT and one contract on BTC/USDT:USDT. Lot step and minimum are the market's
 * amount precision and minimum, the price grid its price precision; profit is counted in the
 * settle currency (swaps) or the quote currency (spot). Pips are 1 unless configured.
 */
export function instrumentOfMarket(market: Market, pipSize: number): InstrumentSpec | null {
  if (market === undefined || market.inverse) return null; // profit in the base coin: not what the engine counts in
  const tick = market.precision?.price;
  const step = market.precision?.amount;
  if (typeof tick !== 'number' || typeof step !== 'number' || !(tick > 0) || !(step > 0)) return null;
  const min = market.limits?.amount?.min;
  const max = market.limits?.amount?.max;
  return {
    symbol: market.symbol,
    pipSize,
    digits: decimalsOf(tick),
    contractSize: market.contract ? Number(market.contractSize ?? 1) : 1,
    lotStep: step,
    lotMin: typeof min === 'number' && min > 0 ? min : step,
    lotMax: typeof max === 'number' && max > 0 ? max : Number.MAX_SAFE_INTEGER,
    quoteCurrency: (market.contract ? market.settle : market.quote) ?? market.quote,
  };
}

/** Decimals of a tick size such as 0.01 (2) or 1e-8 (8). */
function decimalsOf(tick: number): number {
  const text = tick.toExponential();
  const [mantissa, exponent] = text.split('e');
  const fraction = mantissa!.split('.')[1]?.length ?? 0;
  return Math.max(0, fraction - Number(exponent));
}
