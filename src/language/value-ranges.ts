/**
 * The sensible range of every numeric parameter. Each check answers the detail of what is
 * wrong (naming the parameter, the value and the range) or undefined when the value is fine.
 * Values are already finite numbers.
 */
import { formatDecimal } from './decimal-number.js';
import type { Action, PriceUnit, VolumeType } from './signal.js';
import { entryBelowPrice, isBuySide, isSellSide } from './action-scope.js';

export function volumeProblem(label: string, type: VolumeType | undefined, value: number): string | undefined {
  if (value <= 0) return `${label} must be greater than 0, got ${formatDecimal(value)}`;
  if ((type === 'pctbal_loss' || type === 'pcteq_loss') && value > 100) {
    const base = type === 'pctbal_loss' ? 'balance' : 'equity';
    return `${label} risks ${formatDecimal(value)}% of the ${base} on one trade; give at most 100`;
  }
  return undefined;
}

export type DistanceRole = 'stop loss' | 'take profit' | 'entry';

/**
 * Stops, targets and entries are all positive (the engine applies the direction). A percent
 * that would put the price at or below zero is refused: a buy's stop or a sell's target 100%
 * or more below the entry, a limit buy or stop sell entry 100% or more below the price. Above
 * the price any percent is a real price, so the other side has no upper limit.
 */
export function distanceProblem(
  label: string,
  role: DistanceRole,
  unit: PriceUnit,
  value: number,
  action: Action | undefined,
): string | undefined {
  if (value <= 0) {
    const what = unit === 'price' ? 'a price' : unit === 'pips' ? 'a distance in pips' : 'a percent move';
    return `${label} must be greater than 0 (${what}), got ${formatDecimal(value)}`;
  }
  if (unit !== 'percent' || value < 100) return undefined;
  const written = formatDecimal(value);
  if (role === 'stop loss' && action !== undefined && isBuySide(action)) {
    return `${label} must be below 100 for ${action} (a stop 100% below the entry is at a price of zero or less), got ${written}`;
  }
  if (role === 'take profit' && action !== undefined && isSellSide(action)) {
    return `${label} must be below 100 for ${action} (a target 100% below the entry is at a price of zero or less), got ${written}`;
  }
  if (role === 'entry' && action !== undefined && entryBelowPrice(action)) {
    return `${label} must be below 100 for ${action} (an entry 100% below the price is at zero or less), got ${written}`;
  }
  return undefined;
}

export function positiveProblem(label: string, value: number, unit: string): string | undefined {
  return value > 0 ? undefined : `${label} must be greater than 0 (${unit}), got ${formatDecimal(value)}`;
}

export function nonNegativeProblem(label: string, value: number, unit: string): string | undefined {
  return value >= 0 ? undefined : `${label} must be 0 or more (${unit}), got ${formatDecimal(value)}`;
}

export function closePercentProblem(label: string, value: number): string | undefined {
  return value > 0 && value <= 100
    ? undefined
    : `${label} must be greater than 0 and at most 100 (percent of each position to close), got ${formatDecimal(value)}`;
}

/** TP shares are whole percents, so levels split and sum exactly. */
export function shareProblem(label: string, value: number): string | undefined {
  return Number.isInteger(value) && value >= 1 && value <= 100
    ? undefined
    : `${label} must be a whole percent from 1 to 100, got ${formatDecimal(value)}`;
}
