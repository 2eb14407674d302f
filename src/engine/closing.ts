/**
 * Closing all or part of a position: the profit is worked out in the quote currency, converted
 * to the account currency at the feed's current rate, rounded to the cent and booked to the
 * balance, and a `partial_close` or `closed` event reports it.
 */
import { roundMoney } from './decimals.js';
import type { CloseReason } from './events.js';
import type { InstrumentSpec } from './instruments.js';
import { rateToAccount, type Ledger } from './ledger.js';
import { roundLots } from './lots.js';
import { quoteProfit, type Position } from './positions.js';

/**
 * Closes `lots` of `position` at `price` (all of it when `lots` reaches its volume) and
 * answers what stays open, or null.
 */
export function closeLots(
  ledger: Ledger,
  position: Position,
  lots: number,
  price: number,
  reason: CloseReason,
  spec: InstrumentSpec,
): Position | null {
  const rate = rateToAccount(ledger.config, ledger.quotes, spec.quoteCurrency);
  // A position only opens when its rate is known, and quotes are never forgotten.
  if (rate === null) throw new Error(`no rate for ${spec.quoteCurrency} while closing position ${position.ticket}`);
  const all = lots >= position.volume;
  const closed = all ? position.volume : lots;
  const profit = roundMoney(quoteProfit(position.side, position.price, price, closed, spec.contractSize) * rate);
  ledger.balance = roundMoney(ledger.balance + profit);
  const base = { time: ledger.time, position: position.ticket, volume: closed, price, profit };
  if (all) {
    ledger.events.push({ type: 'closed', ...base, reason });
    return null;
  }
  ledger.events.push({ type: 'partial_close', ...base });
  return { ...position, volume: roundLots(position.volume - closed, spec.lotStep) };
}
