/**
 * Builds the take-profit levels (docs/signal-language.md) from a single target (tp_pips, tp_price,
 * tp_percent or the JSON typed tp) or from numbered levels tp1…tpN with optional shares
 * pct1…pctN, reporting every structural problem: gaps, shares without a level, shares over
 * 100%, and levels the given shares leave nothing for.
 */
import type { GivenParameter } from './given-parameter.js';
import { nameList } from './name-list.js';
import type { ProblemLog } from './problem-log.js';
import type { Action, PriceUnit, TakeProfitLevel } from './signal.js';
import { splitShares } from './tp-share-split.js';
import { distanceProblem } from './value-ranges.js';
import { ErrorCode } from '../errors/catalog.js';

export interface SingleTarget extends GivenParameter<number> {
  /** From the name (tp_pips …); undefined for the JSON typed `tp`, whose unit is tpType. */
  unit: PriceUnit | undefined;
}

export interface NumberedLevel extends GivenParameter<number> {
  /** From the suffix (tp2_price); undefined for a bare tpN, which takes tp1's unit. */
  unit: PriceUnit | undefined;
}

export interface TakeProfitInput {
  single: SingleTarget | undefined;
  /** JSON typed style; undefined value when unreadable. */
  tpType: GivenParameter<PriceUnit> | undefined;
  levels: ReadonlyMap<number, NumberedLevel>;
  shares: ReadonlyMap<number, GivenParameter<number>>;
  action: Action | undefined;
}

export function buildTakeProfit(input: TakeProfitInput, log: ProblemLog): TakeProfitLevel[] | undefined {
  const { single, tpType, levels, shares, action } = input;
  let typedUnit: PriceUnit | undefined;
  if (tpType !== undefined) {
    if (single === undefined || single.unit !== undefined) {
      const detail =
        single === undefined
          ? 'tpType is given without tp; add tp (the target) or remove tpType'
          : `tpType goes with tp; ${single.param} already carries its unit in its name, so remove tpType`;
      log.add(tpType.position, ErrorCode.INVALID_PARAMETER, detail, tpType.param);
    } else {
      typedUnit = tpType.value;
    }
  }

  for (const [level, share] of shares) {
    if (levels.has(level)) continue;
    // Beside a single target, tpN may have been written and refused as its variant: not "without".
    const detail =
      single === undefined
        ? `pct${level} is given without tp${level}; pct${level} is the share of the position closed at take-profit level ${level}`
        : `pct${level} is the share closed at tp${level}, but with a single ${single.param} the whole position closes at the target; for partial targets use tp1, tp2 … with pct1, pct2 … and no ${single.param}`;
    log.add(share.position, ErrorCode.INVALID_PARAMETER, detail, share.param);
  }

  if (single !== undefined) {
    if (single.value === undefined || (tpType !== undefined && tpType.value === undefined)) return undefined;
    const unit = single.unit ?? typedUnit ?? 'pips';
    const label = single.unit === undefined ? `${single.param} (in ${unit})` : single.param;
    const problem = distanceProblem(label, 'take profit', unit, single.value, action);
    if (problem !== undefined) {
      log.add(single.position, ErrorCode.INVALID_PARAMETER, problem, single.param);
      return undefined;
    }
    return [{ type: unit, value: single.value, pct: 100 }];
  }
  if (levels.size === 0) return undefined;
  return buildLevels(levels, shares, action, log);
}

function buildLevels(
  levels: ReadonlyMap<number, NumberedLevel>,
  shares: ReadonlyMap<number, GivenParameter<number>>,
  action: Action | undefined,
  log: ProblemLog,
): TakeProfitLevel[] | undefined {
  let sound = true;
  const numbers = [...levels.keys()].sort((a, b) => a - b);
  for (let index = 0; index < numbers.length; index += 1) {
    const level = numbers[index]!;
    const below = index === 0 ? 0 : numbers[index - 1]!;
    if (below === level - 1) continue;
    const missing = Array.from({ length: level - below - 1 }, (_, offset) => `tp${below + 1 + offset}`);
    const entry = levels.get(level)!;
    log.add(
      entry.position,
      ErrorCode.INVALID_PARAMETER,
      `${entry.param} is given without ${nameList(missing, 'and')}; number take-profit levels from tp1 on without gaps`,
      entry.param,
    );
    sound = false;
  }

  // Bare tpN takes the unit of tp1; a bare tp1 is in pips.
  const firstUnit = levels.get(1)?.unit ?? 'pips';
  const built: { level: number; type: PriceUnit; value: number }[] = [];
  for (const level of numbers) {
    const entry = levels.get(level)!;
    const unit = entry.unit ?? firstUnit;
    if (entry.value === undefined) {
      sound = false;
      continue;
    }
    const label =
      entry.unit === undefined && level !== 1 ? `${entry.param} (in ${unit}, the unit of tp1)` : entry.param;
    const problem = distanceProblem(label, 'take profit', unit, entry.value, action);
    if (problem !== undefined) {
      log.add(entry.position, ErrorCode.INVALID_PARAMETER, problem, entry.param);
      sound = false;
      continue;
    }
    built.push({ level, type: unit, value: entry.value });
  }

  const givenShares: GivenParameter<number>[] = [];
  let sum = 0;
  for (const [level, share] of shares) {
    if (!levels.has(level)) continue;
    if (share.value === undefined) return undefined;
    givenShares.push(share);
    sum += share.value;
  }
  if (sum > 100) {
    const byPosition = [...givenShares].sort((a, b) => a.position - b.position);
    const last = byPosition[byPosition.length - 1]!;
    const names = nameList(
      byPosition.map((share) => share.param),
      'and',
    );
    log.add(
      last.position,
      ErrorCode.INVALID_PARAMETER,
      `${names} add up to ${sum}%; the take-profit shares may total at most 100`,
      last.param,
    );
    return undefined;
  }
  const unshared = numbers.filter((level) => !shares.has(level));
  const rest = 100 - sum;
  if (unshared.length > 0 && rest < unshared.length) {
    const first = levels.get(unshared[0]!)!;
    const names = nameList(
      unshared.map((level) => `tp${level}`),
      'and',
    );
    const givenNames = nameList(
      givenShares.map((share) => share.param),
      'and',
    );
    const single = givenShares.length === 1;
    const missingShares = nameList(
      unshared.map((level) => `pct${level}`),
      'and',
    );
    const detail =
      rest === 0
        ? `${givenNames} already ${single ? 'gives' : 'give'} away 100% of the position, leaving nothing for ${names}; give ${missingShares}, or lower the other shares`
        : `${givenNames} ${single ? 'leaves' : 'leave'} ${rest}% for ${names}, less than 1% per level; give ${missingShares}, or lower the other shares`;
    log.add(first.position, ErrorCode.INVALID_PARAMETER, detail, first.param);
    return undefined;
  }
  if (!sound) return undefined;

  // Sound, so every level was built, in level order: the unshared ones take the split in turn.
  const split = unshared.length > 0 ? splitShares(rest, unshared.length) : [];
  let nextSplit = 0;
  const takeProfit: TakeProfitLevel[] = [];
  for (const { level, type, value } of built) {
    const share = shares.get(level);
    const pct = share !== undefined ? share.value! : split[nextSplit++]!;
    takeProfit.push({ type, value, pct });
  }
  return takeProfit;
}
