/**
 * Currency conversion through the feed's own rates. Profit and notional value
 * arise in an instrument's quote currency and are converted to the account currency at the mid
 * price of the pair that links them: directly (EURUSD for EUR → USD), inversely (USDJPY for
 * JPY → USD) or, failing both, through USD (JPY → USD → EUR).
 */
import { midPrice, type Quote } from './market.js';

/** Finds the latest quote of a canonical pair such as `USDJPY`, or undefined. */
export type PairQuote = (canonicalPair: string) => Quote | undefined;

/** Units of `to` per unit of `from`, or null when the feed has no rate linking them. */
export function conversionRate(from: string, to: string, quoteOf: PairQuote): number | null {
  if (from === to) return 1;
  const direct = quoteOf(from + to);
  if (direct !== undefined) return midPrice(direct);
  const inverse = quoteOf(to + from);
  if (inverse !== undefined) return 1 / midPrice(inverse);
  if (from !== 'USD' && to !== 'USD') {
    const toUsd = conversionRate(from, 'USD', quoteOf);
    const fromUsd = toUsd === null ? null : conversionRate('USD', to, quoteOf);
    if (toUsd !== null && fromUsd !== null) return toUsd * fromUsd;
  }
  return null;
}

/** The sentence a signal is rejected with when no rate links the two currencies. */
export function noRateReason(from: string, to: string): string {
  const via = from !== 'USD' && to !== 'USD' ? ` (nor ${from}USD/USD${from} with ${to}USD/USD${to})` : '';
  return `no price for ${from}${to} or ${to}${from}${via} in the feed yet to convert ${from} to the account currency ${to}`;
}
