import type { EngineEvent, EngineState, Position, Quote } from '../engine/index.js';
import type { LedgerBust, LedgerFill } from '../protocol/ledger-report.js';
import type { VenueOrder, VenueReport } from './venue.js';

/** One step of the book: the state before and after, what the engine did, and the venue's orders that did it. */
export interface BookStep {
  before: EngineState;
  after: EngineState;
  events: readonly EngineEvent[];
  orders: readonly VenueOrder[];
  /** The signal the step carried out; null for what the venue or the quotes did on their own. */
  signalId: string | null;
  /** The account's currency, for fees the venue did not name one for. */
  currency: string;
  /**
   * The venue's quotes, by venue symbol, that the agent held when it took the step's signal: an
   * opening fill at the market carries the side it trades at (the ask for a buy, the bid for a
   * sell), the ledger's `quoteAtReceipt`. Absent: no quote (what the venue did on its own).
   */
  receipt?: Readonly<Record<string, Quote>>;
}

/**
 * The ledger's fills of one step of the book: each lot the engine opened or closed as the venue
 * filled it, with the venue's order id and fee where the step's orders carry them. The id is the
 * venue's: its order id and that order's filled lots so far (`<order>@<filled>`), so a later part
 * of the same order is a fill of its own and the same report always yields the same id. A fill no
 * venue order stands for (the paper engine's stop or target reached on a tick) is named after the
 * position, what it did, the time and the lots.
 */
export function ledgerFillsOf(step: BookStep): LedgerFill[] {
  const unused = step.orders.filter((order) => order.filled > 0);
  const fills: LedgerFill[] = [];
  const positionOf = (ticket: number): Position | undefined =>
    step.after.positions.find((p) => p.ticket === ticket) ?? step.before.positions.find((p) => p.ticket === ticket);
  for (const event of step.events) {
    if (event.type !== 'opened' && event.type !== 'partial_close' && event.type !== 'closed') continue;
    const position = positionOf(event.position);
    if (position === undefined) continue;
    const opening = event.type === 'opened';
    const side = opening ? position.side : position.side === 'buy' ? 'sell' : 'buy';
    const index = unused.findIndex((order) => order.side === side);
    const order = index >= 0 ? unused.splice(index, 1)[0]! : null;
    const at = new Date(event.time).toISOString();
    // An order's fee over the lots it put in the book (a buy's fee taken from its coins: those kept).
    const paid = order === null ? null : feeOf(order, step.currency);
    const fee =
      order === null || paid === null
        ? 0
        : paid.fee * Math.min(1, event.volume / (order.feeInCoin?.kept ?? order.filled));
    fills.push({
      venueFillId:
        order !== null
          ? `${order.id}@${order.filled}`
          : `p${event.position}-${opening ? 'open' : 'close'}-${event.time}-${event.volume}`,
      orderId: order?.id ?? '',
      symbol: position.symbol,
      side,
      lots: event.volume,
      price: event.price,
      fee: Math.round(fee * 1e8) / 1e8,
      feeCurrency: paid?.currency ?? step.currency,
      at,
      signalId: opening ? (step.signalId ?? position.signalId) : step.signalId,
      effect: opening ? 'open' : 'close',
      ...(!opening && { profit: event.profit }),
      ...(opening && receiptQuote(step, position.symbol, side, order)),
    });
  }
  return fills;
}

/**
 * The ledger's bust of a venue's report that it took back lots of an order's fills: keyed by the
 * id `ledgerFillsOf` gave the fill, the order's filled lots when it was made (`bustedAt`, the fill
 * the venue named, or the latest: the lots standing now plus those taken back), with the lots of
 * it taken back in all, so a second bust of one fill supersedes the first.
 */
export function ledgerBustOf(report: Extract<VenueReport, { type: 'fill_busted' }>, at: number): LedgerBust {
  const filled = report.bustedAt ?? Math.round((report.order.filled + report.lots) * 1e8) / 1e8;
  return {
    venueFillId: `${report.order.id}@${filled}`,
    lots: report.bustedInAll ?? report.lots,
    at: new Date(at).toISOString(),
  };
}

/** A market entry's quote at receipt; none for a pending entry, filled at a price chosen on purpose. */
function receiptQuote(
  step: BookStep,
  symbol: string,
  side: 'buy' | 'sell',
  order: VenueOrder | null,
): { quote: number } | Record<string, never> {
  const quote = step.signalId === null ? undefined : step.receipt?.[symbol];
  if (quote === undefined || (order !== null && order.kind !== 'market')) return {};
  return { quote: side === 'buy' ? quote.ask : quote.bid };
}

/**
 * An order's fee and its currency. A fee the venue took from the coins bought (a spot buy's
 * commission, `feeInCoin`) counts in the account currency at its fill's price, as the other fees of
 * a trade are: added as coins, a BTC fee of 0.00001 stood for 0.00001 USDT in the trade's fees.
 * A fee in a third coin (BNB) is kept in that coin, as the venue named it.
 */
function feeOf(order: VenueOrder, currency: string): { fee: number; currency: string } {
  const coin = order.feeInCoin?.coin;
  let inCurrency = 0;
  let otherFee = 0;
  let otherCurrency: string | null = null;
  for (const fill of order.fills) {
    if (fill.fee === null) continue;
    if (fill.fee.currency === currency) inCurrency += fill.fee.cost;
    else if (coin !== undefined && fill.fee.currency === coin) inCurrency += fill.fee.cost * fill.price;
    else {
      otherFee += fill.fee.cost;
      otherCurrency = fill.fee.currency;
    }
  }
  return otherCurrency !== null && inCurrency === 0
    ? { fee: otherFee, currency: otherCurrency }
    : { fee: inCurrency, currency };
}
