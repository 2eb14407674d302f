/**
 * Equity = balance + floating profit of the open positions, each valued at its current
 * closing price and converted to the account currency at the feed's current rate.
 */
import { roundMoney } from './decimals.js';
import { instrumentOf, rateToAccount } from './ledger.js';
import { closePrice, type Quotes } from './market.js';
import { quoteProfit, type Position } from './positions.js';
import type { EngineConfig } from './state.js';

/** Floating profit of one position in account currency (unrounded). */
export function floatingProfit(config: EngineConfig, quotes: Quotes, position: Position): number {
  const quote = quotes[position.symbol];
  const spec = instrumentOf(config, position.symbol);
  const rate = spec === null ? null : rateToAccount(config, quotes, spec.quoteCurrency);
  // Positions only open with a known instrument, price and rate, and those are never forgotten.
  if (quote === undefined || spec === null || rate === null) return 0;
  return (
    quoteProfit(position.side, position.price, closePrice(position.side, quote), position.volume, spec.contractSize) *
    rate
  );
}

export function equityOf(
  config: EngineConfig,
  quotes: Quotes,
  balance: number,
  positions: readonly Position[],
): number {
  let floating = 0;
  for (const position of positions) floating += floatingProfit(config, quotes, position);
  return roundMoney(balance + floating);
}
