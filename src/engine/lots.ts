/**
 * Lot rounding: volumes are floored to the lot step, never rounded up, and must
 * lie within the instrument's minimum and maximum.
 */
import { decimalsOf, roundTo } from './decimals.js';
import type { InstrumentSpec } from './instruments.js';

/**
 * Slack, in steps, for binary floating point: 0.5 / 0.01 is 49.99999999999999 in floats and
 * must floor to 50 steps, not 49. A true shortfall of a billionth of a step is lost with it.
 */
const STEP_TOLERANCE = 1e-9;

/** Relative slack on top: a size computed through prices carries float error that grows with it. */
const RELATIVE_TOLERANCE = 1e-12;

/** `lots` floored to a whole number of steps, on the step's decimal grid. */
export function floorToStep(lots: number, step: number): number {
  const ratio = lots / step;
  const steps = Math.floor(ratio + STEP_TOLERANCE + Math.abs(ratio) * RELATIVE_TOLERANCE);
  return roundTo(steps * step, decimalsOf(step));
}

/** `lots` put back on the step's decimal grid (after adding or subtracting volumes). */
export function roundLots(lots: number, step: number): number {
  return roundTo(lots, decimalsOf(step));
}

export type LotsOutcome = { ok: true; lots: number } | { ok: false; reason: string };

/** A computed size, floored to the step and checked against the instrument's limits. */
export function checkLots(raw: number, spec: InstrumentSpec): LotsOutcome {
  if (!Number.isFinite(raw) || raw <= 0) {
    return { ok: false, reason: `the computed volume (${raw}) is not a positive number of lots` };
  }
  const lots = floorToStep(raw, spec.lotStep);
  if (lots < spec.lotMin - STEP_TOLERANCE * spec.lotStep) {
    return {
      ok: false,
      reason: `the volume ${formatLots(raw)} lots is below the minimum of ${spec.lotMin} lots for ${spec.symbol}; it is not rounded up`,
    };
  }
  if (lots > spec.lotMax + STEP_TOLERANCE * spec.lotStep) {
    return {
      ok: false,
      reason: `the volume ${formatLots(raw)} lots is above the maximum of ${spec.lotMax} lots for ${spec.symbol}`,
    };
  }
  return { ok: true, lots };
}

/**
 * How much of a position a requested partial close actually closes:
 * - a request floored below the minimum lot closes nothing (0);
 * - a request that would leave less than the minimum lot open closes the whole position,
 *   because a stub below the minimum could never be closed on its own;
 * - otherwise the request floored to the step.
 */
export function partialCloseLots(requested: number, open: number, spec: InstrumentSpec): number {
  const lots = floorToStep(requested, spec.lotStep);
  const tolerance = STEP_TOLERANCE * spec.lotStep;
  if (lots >= open - tolerance) return open;
  if (lots < spec.lotMin - tolerance) return 0;
  if (open - lots < spec.lotMin - tolerance) return open;
  return lots;
}

/** A lot figure for a sentence: at most 8 decimals, no float noise. */
export function formatLots(lots: number): string {
  return String(roundTo(lots, 8));
}
