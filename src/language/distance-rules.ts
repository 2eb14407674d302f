/**
 * A stop loss or a pending entry: flat (unit in the name) or, for the stop, JSON typed (sl with
 * slType, pips by default), in the range its unit and the action allow.
 */
import type { TypedOrFlat } from './collected-parameters.js';
import type { GivenParameter } from './given-parameter.js';
import type { ProblemLog } from './problem-log.js';
import type { Action, Distance, PriceUnit } from './signal.js';
import { distanceProblem } from './value-ranges.js';
import { ErrorCode } from '../errors/catalog.js';

/** A stop loss or entry: flat (unit in the name) or, for the stop, JSON typed with slType. */
export function buildDistance(
  given: TypedOrFlat<PriceUnit> | undefined,
  typeKey: GivenParameter<PriceUnit> | undefined,
  base: string,
  role: 'stop loss' | 'entry',
  action: Action | undefined,
  log: ProblemLog,
): Distance | undefined {
  if (typeKey !== undefined && (given === undefined || given.type !== undefined)) {
    const detail =
      given === undefined
        ? `${typeKey.param} is given without ${base}; add ${base} or remove ${typeKey.param}`
        : `${typeKey.param} goes with ${base}; ${given.param} already carries its unit in its name, so remove ${typeKey.param}`;
    log.add(typeKey.position, ErrorCode.INVALID_PARAMETER, detail, typeKey.param);
    return undefined;
  }
  if (given === undefined || given.value === undefined) return undefined;
  if (given.type === undefined && typeKey !== undefined && typeKey.value === undefined) return undefined;
  const unit = given.type ?? typeKey?.value ?? 'pips';
  const label = given.type === undefined ? `${given.param} (in ${unit})` : given.param;
  const problem = distanceProblem(label, role, unit, given.value, action);
  if (problem !== undefined) {
    log.add(given.position, ErrorCode.INVALID_PARAMETER, problem, given.param);
    return undefined;
  }
  return { type: unit, value: given.value };
}
