/**
 * Position management on every tick, in this order:
 * 1. stop loss: reached when the closing price touches it (equal counts); fills at the tick's
 *    closing price, so a gap fills at the gapped price. Checked first, so the stop wins when a
 *    tick reaches both it and a target.
 * 2. take-profit levels, in order: level k closes pct_k% of the original volume floored to
 *    the step; the level that brings the total to 100% closes whatever remains.
 * 3. breakeven: once profit reaches `trigger` pips, the stop moves to entry ± `offset`, once.
 * 4. trailing: once profit reaches `trigger` pips, the stop follows the closing price at
 *    `distance` pips, only forward and only by at least `step` pips.
 * A stop never moves backward. Where the venue fills exits (fill-rules.ts), steps 1 and 2 are
 * the venue's: its reports close the position, the tick only moves the stop.
 */
import { closeLots } from './closing.js';
import { powerOfTen, roundTo } from './decimals.js';
import type { Filler } from './fill-rules.js';
import type { InstrumentSpec } from './instruments.js';
import type { Ledger } from './ledger.js';
import { partialCloseLots } from './lots.js';
import { closePrice, direction, type Quote } from './market.js';
import type { Position } from './positions.js';

/** Slack for comparing pip counts worked out in floats (10 pips may come out as 9.9999999). */
const PIP_TOLERANCE = 1e-7;

/** Shares are whole-ish percents; slack so that 33 + 33 + 34 counts as 100. */
const PCT_TOLERANCE = 1e-9;

/** Applies one tick to one position; answers the position as it stands after, or null when closed. */
export function managePosition(
  ledger: Ledger,
  position: Position,
  quote: Quote,
  spec: InstrumentSpec,
  exits: Filler = 'engine',
): Position | null {
  const price = closePrice(position.side, quote);
  const dir = direction(position.side);

  if (exits === 'engine' && position.sl !== null && dir * (price - position.sl) <= 0) {
    return closeLots(ledger, position, position.volume, price, 'sl', spec);
  }

  let p: Position | null = position;
  while (exits === 'engine' && p !== null && p.tpNext < p.tp.length) {
    const level = p.tp[p.tpNext]!;
    if (dir * (price - level.price) < 0) break;
    const reachedShare: number = p.tp.slice(0, p.tpNext + 1).reduce((sum, l) => sum + l.pct, 0);
    const lots: number =
      reachedShare >= 100 - PCT_TOLERANCE
        ? p.volume
        : partialCloseLots((p.originalVolume * level.pct) / 100, p.volume, spec);
    const next: Position = { ...p, tpNext: p.tpNext + 1 };
    p = lots > 0 ? closeLots(ledger, next, lots, price, 'tp', spec) : next;
  }
  if (p === null) return null;

  const profitPips = (dir * (price - p.price)) / spec.pipSize;

  if (p.breakeven !== null && !p.breakevenDone && profitPips >= p.breakeven.trigger - PIP_TOLERANCE) {
    const target = roundTo(p.price + dir * p.breakeven.offset * spec.pipSize, spec.digits);
    if (p.sl !== null && dir * (target - p.sl) <= 0) {
      // The stop is already at or past breakeven: nothing to move, and never backward.
      p = { ...p, breakevenDone: true };
    } else if (dir * (price - target) > 0) {
      p = { ...p, sl: target, breakevenDone: true };
      ledger.events.push({ type: 'sl_moved', time: ledger.time, position: p.ticket, sl: target, reason: 'breakeven' });
    }
    // Otherwise the locked-in offset is beyond the price: wait until the price has passed it.
  }

  if (p.trail !== null && profitPips >= p.trail.trigger - PIP_TOLERANCE && trailMayMove(p, price, dir, spec)) {
    const candidate = roundTo(price - dir * p.trail.distance * spec.pipSize, spec.digits);
    const gain = p.sl === null ? Infinity : (dir * (candidate - p.sl)) / spec.pipSize;
    const forward = gain > PIP_TOLERANCE && gain >= p.trail.step - PIP_TOLERANCE;
    if (forward && dir * (price - candidate) > 0) {
      p = { ...p, sl: candidate };
      ledger.events.push({
        type: 'sl_moved',
        time: ledger.time,
        position: p.ticket,
        sl: candidate,
        reason: 'trailing',
      });
    }
  }
  return p;
}

/**
 * A necessary condition for the trail to move, checked on the unrounded trail so that most
 * ticks, where the stop is nowhere near moving, skip the rounding. Rounding to the digits
 * shifts the trail by at most half a digit, which is the slack here.
 */
function trailMayMove(p: Position, price: number, dir: 1 | -1, spec: InstrumentSpec): boolean {
  if (p.sl === null || p.trail === null) return true;
  const rawGain = (dir * (price - p.sl)) / spec.pipSize - p.trail.distance;
  const halfDigit = 0.5 / (powerOfTen(spec.digits) * spec.pipSize);
  return rawGain + halfDigit + PIP_TOLERANCE >= p.trail.step;
}
