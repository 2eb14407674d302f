/**
 * Opening from a signal: a market position filled at the ask (buy) or bid (sell), or a
 * pending order at its entry. Both resolve the stop and targets, size the volume in the
 * account currency and check everything before anything is booked; the first failed check
 * is the rejection reason.
 */
import type { NormalizedSignal } from '../language/index.js';
import { noRateReason } from './currency.js';
import { equityOf } from './equity.js';
import type { OpenedEvent } from './events.js';
import type { InstrumentSpec } from './instruments.js';
import { rateToAccount, takeTicket, type Ledger } from './ledger.js';
import { closePrice, fillPrice, type Quote, type Side } from './market.js';
import { resolveEntry, type OrderKind, type PendingOrder } from './pending-orders.js';
import type { Position } from './positions.js';
import { sizeOrder } from './sizing.js';
import { resolveStops, type Stops } from './stops.js';

export type StepOutcome = { ok: true } | { ok: false; reason: string };

export interface OpenRequest {
  readonly signal: NormalizedSignal;
  readonly side: Side;
  /** Broker symbol. */
  readonly symbol: string;
  readonly spec: InstrumentSpec;
  readonly signalId: string | null;
}

type Priced = { ok: true; quote: Quote; rate: number } | { ok: false; reason: string };

function priced(ledger: Ledger, request: OpenRequest): Priced {
  const quote = ledger.quotes[request.symbol];
  if (quote === undefined) return { ok: false, reason: `there is no price for ${request.symbol} yet` };
  const rate = rateToAccount(ledger.config, ledger.quotes, request.spec.quoteCurrency);
  if (rate === null) return { ok: false, reason: noRateReason(request.spec.quoteCurrency, ledger.config.currency) };
  return { ok: true, quote, rate };
}

type Sized = { ok: true; lots: number } | { ok: false; reason: string };

function size(ledger: Ledger, request: OpenRequest, price: number, stops: Stops, rate: number): Sized {
  return sizeOrder({
    volume: request.signal.volume,
    defaultLots: ledger.config.defaultVolumeLots,
    spec: request.spec,
    price,
    sl: stops.sl,
    rate,
    balance: ledger.balance,
    equity: () => equityOf(ledger.config, ledger.quotes, ledger.balance, ledger.positions),
    currency: ledger.config.currency,
  });
}

/** A new position from a fill (market or pending): what a position starts as. */
export function newPosition(
  ticket: number,
  fill: { symbol: string; side: Side; volume: number; price: number; time: number },
  rules: Pick<PendingOrder, 'sl' | 'tp' | 'comment' | 'trail' | 'breakeven' | 'signalId'>,
): Position {
  return {
    ticket,
    symbol: fill.symbol,
    side: fill.side,
    volume: fill.volume,
    originalVolume: fill.volume,
    price: fill.price,
    sl: rules.sl,
    tp: rules.tp,
    tpNext: 0,
    comment: rules.comment,
    trail: rules.trail,
    breakeven: rules.breakeven,
    breakevenDone: false,
    openedAt: fill.time,
    signalId: rules.signalId,
  };
}

export function openMarket(ledger: Ledger, request: OpenRequest): StepOutcome {
  const market = priced(ledger, request);
  if (!market.ok) return market;
  const { signal, side, spec } = request;
  const price = fillPrice(side, market.quote);
  const resolved = resolveStops(
    signal,
    side,
    price,
    closePrice(side, market.quote),
    `the current ${side === 'buy' ? 'bid' : 'ask'}`,
    spec,
  );
  if (!resolved.ok) return resolved;
  const sized = size(ledger, request, price, resolved.stops, market.rate);
  if (!sized.ok) return sized;
  const position = newPosition(
    takeTicket(ledger),
    { symbol: request.symbol, side, volume: sized.lots, price, time: ledger.time },
    {
      ...resolved.stops,
      comment: signal.comment ?? null,
      trail: signal.trail ?? null,
      breakeven: signal.breakeven ?? null,
      signalId: request.signalId,
    },
  );
  ledger.positions.push(position);
  ledger.events.push(openedEvent(ledger.time, position));
  return { ok: true };
}

export function placeOrder(ledger: Ledger, request: OpenRequest, kind: OrderKind): StepOutcome {
  const market = priced(ledger, request);
  if (!market.ok) return market;
  const { signal, side, spec } = request;
  if (signal.entry === undefined) return { ok: false, reason: `a ${side} ${kind} order needs an entry` };
  const entry = resolveEntry(signal.entry, side, kind, market.quote, spec);
  if (!entry.ok) return entry;
  const resolved = resolveStops(signal, side, entry.price, entry.price, 'the entry', spec);
  if (!resolved.ok) return resolved;
  const sized = size(ledger, request, entry.price, resolved.stops, market.rate);
  if (!sized.ok) return sized;
  const order: PendingOrder = {
    ticket: takeTicket(ledger),
    symbol: request.symbol,
    side,
    kind,
    volume: sized.lots,
    price: entry.price,
    ...resolved.stops,
    comment: signal.comment ?? null,
    trail: signal.trail ?? null,
    breakeven: signal.breakeven ?? null,
    placedAt: ledger.time,
    signalId: request.signalId,
  };
  ledger.orders.push(order);
  ledger.events.push({
    type: 'order_placed',
    time: ledger.time,
    order: order.ticket,
    symbol: order.symbol,
    side,
    kind,
    volume: order.volume,
    price: order.price,
    comment: order.comment,
  });
  return { ok: true };
}

export function openedEvent(time: number, position: Position): OpenedEvent {
  return {
    type: 'opened',
    time,
    position: position.ticket,
    symbol: position.symbol,
    side: position.side,
    volume: position.volume,
    price: position.price,
    sl: position.sl,
    tp: position.tp[0]?.price ?? null,
    comment: position.comment,
  };
}
