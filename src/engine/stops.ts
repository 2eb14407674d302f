/**
 * Stops and targets resolution: a stop loss or take-profit level given in pips,
 * as a price or as a percent becomes a price, measured from the fill price (a pending order's
 * entry price). A stop on the wrong side of the price, or a target that is already reached,
 * rejects the order.
 */
import type { Distance, TakeProfitLevel } from '../language/index.js';
import { roundTo } from './decimals.js';
import type { InstrumentSpec } from './instruments.js';
import { direction, type Side } from './market.js';

export interface TargetLevel {
  readonly price: number;
  /** Percent of the position's original volume this level closes. */
  readonly pct: number;
}

export interface Stops {
  readonly sl: number | null;
  readonly tp: readonly TargetLevel[];
}

export type StopsOutcome = { ok: true; stops: Stops } | { ok: false; reason: string };

/**
 * The price of a stop (`against` = true: on the losing side) or target (on the winning side)
 * `distance` away from `from` for a position of `side`, rounded to the instrument's digits.
 */
export function priceAt(distance: Distance, side: Side, from: number, against: boolean, spec: InstrumentSpec): number {
  const sign = direction(side) * (against ? -1 : 1);
  switch (distance.type) {
    case 'price':
      return roundTo(distance.value, spec.digits);
    case 'pips':
      return roundTo(from + sign * distance.value * spec.pipSize, spec.digits);
    case 'percent':
      return roundTo(from * (1 + (sign * distance.value) / 100), spec.digits);
  }
}

export interface StopsRequest {
  readonly sl?: Distance | undefined;
  readonly tp?: readonly TakeProfitLevel[] | undefined;
}

/**
 * Resolves and checks a signal's stop and targets. `from` is the fill or entry price;
 * `reference` is the price they are checked against, named by `referenceName` in reasons: a
 * buy's stop must lie strictly below it and its targets strictly above (mirrored for a sell),
 * since a level already touched would close the position at once.
 */
export function resolveStops(
  request: StopsRequest,
  side: Side,
  from: number,
  reference: number,
  referenceName: string,
  spec: InstrumentSpec,
): StopsOutcome {
  const dir = direction(side);
  const show = (p: number): string => p.toFixed(spec.digits);
  let sl: number | null = null;
  if (request.sl !== undefined) {
    sl = priceAt(request.sl, side, from, true, spec);
    if (!(sl > 0)) {
      return { ok: false, reason: `the stop loss would be at ${show(sl)}, which is not a positive price` };
    }
    if (dir * (reference - sl) <= 0) {
      const where = side === 'buy' ? 'below' : 'above';
      return {
        ok: false,
        reason: `the stop loss ${show(sl)} of a ${side} must be ${where} ${referenceName} ${show(reference)}`,
      };
    }
  }
  const tp: TargetLevel[] = [];
  for (const [i, level] of (request.tp ?? []).entries()) {
    const price = priceAt(level, side, from, false, spec);
    const name = (request.tp?.length ?? 0) > 1 ? `take-profit level ${i + 1}` : 'take profit';
    if (!(price > 0)) {
      return { ok: false, reason: `the ${name} would be at ${show(price)}, which is not a positive price` };
    }
    if (dir * (price - reference) <= 0) {
      const where = side === 'buy' ? 'above' : 'below';
      return {
        ok: false,
        reason: `the ${name} ${show(price)} of a ${side} must be ${where} ${referenceName} ${show(reference)}`,
      };
    }
    const previous = tp[tp.length - 1];
    if (previous !== undefined && dir * (price - previous.price) < 0) {
      return {
        ok: false,
        reason: `take-profit level ${i + 1} (${show(price)}) is nearer the entry than level ${i} (${show(previous.price)}); levels must be in order`,
      };
    }
    tp.push({ price, pct: level.pct });
  }
  return { ok: true, stops: { sl, tp } };
}
