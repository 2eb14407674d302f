/**
 * Pending orders: limit and stop entries. The entry in pips or percent is
 * measured from the current ask for buy orders and the bid for sell orders, in the direction
 * the order kind implies (a buy limit below, a buy stop above); an entry on the wrong side of
 * the price rejects the order. They fill when the price reaches the entry:
 * buy limit ask ≤ entry, buy stop ask ≥ entry, sell limit bid ≥ entry, sell stop bid ≤ entry,
 * at that tick's ask (buys) or bid (sells), so a gap fills at the gapped price.
 */
import type { Breakeven, Distance, Trail } from '../language/index.js';
import { roundTo } from './decimals.js';
import type { InstrumentSpec } from './instruments.js';
import { fillPrice, type Quote, type Side } from './market.js';
import type { TargetLevel } from './stops.js';

export type OrderKind = 'limit' | 'stop';

export interface PendingOrder {
  readonly ticket: number;
  /** Broker symbol. */
  readonly symbol: string;
  readonly side: Side;
  readonly kind: OrderKind;
  /** Lots, sized when the order was placed. */
  readonly volume: number;
  /** Entry price. */
  readonly price: number;
  readonly sl: number | null;
  readonly tp: readonly TargetLevel[];
  readonly comment: string | null;
  readonly trail: Trail | null;
  readonly breakeven: Breakeven | null;
  readonly placedAt: number;
  readonly signalId: string | null;
}

/** +1 when the entry lies above the reference price, -1 when below. */
function entrySide(side: Side, kind: OrderKind): 1 | -1 {
  return (side === 'buy') === (kind === 'stop') ? 1 : -1;
}

export type EntryOutcome = { ok: true; price: number } | { ok: false; reason: string };

/** The entry price of a new order, checked to be on the right side of the current price. */
export function resolveEntry(
  entry: Distance,
  side: Side,
  kind: OrderKind,
  quote: Quote,
  spec: InstrumentSpec,
): EntryOutcome {
  const reference = fillPrice(side, quote);
  const sign = entrySide(side, kind);
  const price =
    entry.type === 'price'
      ? roundTo(entry.value, spec.digits)
      : entry.type === 'pips'
        ? roundTo(reference + sign * entry.value * spec.pipSize, spec.digits)
        : roundTo(reference * (1 + (sign * entry.value) / 100), spec.digits);
  const show = (p: number): string => p.toFixed(spec.digits);
  if (!(price > 0)) return { ok: false, reason: `the entry would be at ${show(price)}, which is not a positive price` };
  if (sign * (price - reference) <= 0) {
    const where = sign > 0 ? 'above' : 'below';
    const of = side === 'buy' ? 'ask' : 'bid';
    return {
      ok: false,
      reason: `the entry ${show(price)} of a ${side} ${kind} must be ${where} the current ${of} ${show(reference)}`,
    };
  }
  return { ok: true, price };
}

/** Whether a tick reaches the order's entry. */
export function reachesEntry(order: PendingOrder, quote: Quote): boolean {
  const price = fillPrice(order.side, quote);
  // A limit fills at the entry or better, a stop once the price has got there.
  return entrySide(order.side, order.kind) > 0 ? price >= order.price : price <= order.price;
}
