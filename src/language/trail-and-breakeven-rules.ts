/**
 * Position management: trailing needs trail_distance (trigger and step default 0), breakeven
 * needs be_trigger (offset defaults 0, and must stay below the trigger), all in pips.
 */
import type { Collected } from './collected-parameters.js';
import { formatDecimal } from './decimal-number.js';
import type { GivenParameter } from './given-parameter.js';
import type { ProblemLog } from './problem-log.js';
import type { Breakeven, Trail } from './signal.js';
import { nonNegativeProblem, positiveProblem } from './value-ranges.js';
import { ErrorCode } from '../errors/catalog.js';

export function buildTrail(given: Collected['trail'], log: ProblemLog): Trail | undefined {
  const { trigger, distance, step } = given;
  if (distance === undefined) {
    for (const orphan of [trigger, step]) {
      if (orphan === undefined) continue;
      log.add(
        orphan.position,
        ErrorCode.INVALID_PARAMETER,
        `${orphan.param} needs trail_distance (how many pips the stop trails behind the price); add trail_distance or remove ${orphan.param}`,
        orphan.param,
      );
    }
    return undefined;
  }
  // Each check runs (and reports) whatever the others find.
  const triggerSound = checkTrailValue(trigger, 'trail_trigger', true, 'pips of profit before trailing starts', log);
  const distanceSound = checkTrailValue(distance, 'trail_distance', false, 'pips behind the price', log);
  const stepSound = checkTrailValue(step, 'trail_step', true, 'pips the price must advance per move', log);
  if (!triggerSound || !distanceSound || !stepSound) return undefined;
  return { trigger: trigger?.value ?? 0, distance: distance.value!, step: step?.value ?? 0 };
}

/** Whether a trail value, if given, was readable and in range (reporting it when out of range). */
function checkTrailValue(
  parameter: GivenParameter<number> | undefined,
  label: string,
  zeroAllowed: boolean,
  unit: string,
  log: ProblemLog,
): boolean {
  if (parameter === undefined) return true;
  if (parameter.value === undefined) return false;
  const problem = zeroAllowed
    ? nonNegativeProblem(label, parameter.value, unit)
    : positiveProblem(label, parameter.value, unit);
  if (problem === undefined) return true;
  log.add(parameter.position, ErrorCode.INVALID_PARAMETER, problem, parameter.param);
  return false;
}

export function buildBreakeven(given: Collected['breakeven'], log: ProblemLog): Breakeven | undefined {
  const { trigger, offset } = given;
  if (trigger === undefined) {
    if (offset !== undefined) {
      log.add(
        offset.position,
        ErrorCode.INVALID_PARAMETER,
        'be_offset needs be_trigger (the profit in pips at which the stop moves to breakeven); add be_trigger or remove be_offset',
        offset.param,
      );
    }
    return undefined;
  }
  let sound = trigger.value !== undefined && (offset === undefined || offset.value !== undefined);
  for (const parameter of [trigger, offset]) {
    if (parameter?.value === undefined) continue;
    const problem = nonNegativeProblem(parameter.param, parameter.value, 'pips');
    if (problem !== undefined) {
      log.add(parameter.position, ErrorCode.INVALID_PARAMETER, problem, parameter.param);
      sound = false;
    }
  }
  if (!sound) return undefined;
  const triggerPips = trigger.value!;
  const offsetPips = offset?.value ?? 0;
  if (offset !== undefined && offsetPips > 0 && offsetPips >= triggerPips) {
    log.add(
      offset.position,
      ErrorCode.INVALID_PARAMETER,
      `be_offset (${formatDecimal(offsetPips)}) must be below be_trigger (${formatDecimal(triggerPips)}): when the stop moves the trade is only ${formatDecimal(triggerPips)} pips in profit, so it cannot lock in ${formatDecimal(offsetPips)}`,
      offset.param,
    );
    return undefined;
  }
  return { trigger: triggerPips, offset: offsetPips };
}
