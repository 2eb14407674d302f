/**
 * Reads each accepted parameter's value as the kind its parameter takes and files it under what
 * it sets. Checks that need companions (units from *Type keys, shares against levels, trail
 * against trail_distance) come after, when everything given is known.
 */
import { ErrorCode } from '../errors/catalog.js';
import { asciiLowerCase } from './ascii-case.js';
import { commentProblem } from './comment-rules.js';
import { readFlagValue, readNumberValue, readTextValue } from './entry-value.js';
import type { GivenParameter } from './given-parameter.js';
import { nameList } from './name-list.js';
import { MAX_TP_LEVELS } from './parameter-table.js';
import type { ProblemLog } from './problem-log.js';
import { quotedExcerpt } from './quoted-excerpt.js';
import type { AcceptedEntry } from './signal-entry.js';
import type { Breakeven, CloseAmount, Opposite, PriceUnit, Trail, VolumeType } from './signal.js';
import { PRICE_UNITS, VOLUME_TYPES } from './signal.js';
import type { NumberedLevel, SingleTarget } from './take-profit-levels.js';
import { closePercentProblem, positiveProblem, shareProblem } from './value-ranges.js';

/** A volume, stop or entry given either flat (unit in the name) or typed (unit in *Type). */
export interface TypedOrFlat<T> extends GivenParameter<number> {
  /** From the name; undefined for the JSON typed key. */
  type: T | undefined;
}

/** Everything the sender gave, read but not yet range-checked against its companions. */
export interface Collected {
  comment?: string;
  volume?: TypedOrFlat<VolumeType>;
  volumeType?: GivenParameter<VolumeType>;
  sl?: TypedOrFlat<PriceUnit>;
  slType?: GivenParameter<PriceUnit>;
  tp?: SingleTarget;
  tpType?: GivenParameter<PriceUnit>;
  levels: Map<number, NumberedLevel>;
  shares: Map<number, GivenParameter<number>>;
  entry?: TypedOrFlat<PriceUnit>;
  trail: Partial<Record<keyof Trail, GivenParameter<number>>>;
  breakeven: Partial<Record<keyof Breakeven, GivenParameter<number>>>;
  close?: GivenParameter<CloseAmount>;
  opposite?: Opposite;
}

/** Reads the value an accepted parameter takes and files it under what it sets. */
export function collect(item: AcceptedEntry, collected: Collected, log: ProblemLog): void {
  const { entry, known } = item;
  const { definition, param } = known;
  const { position } = entry;
  switch (definition.kind) {
    case 'symbol':
    case 'action':
      return;
    case 'comment': {
      const reading = readTextValue(entry.value, param, 'my strategy');
      if (!reading.ok) return reportInvalid(item, log, reading.detail);
      const comment = reading.value.trim();
      const problem = commentProblem(comment);
      if (problem !== undefined) return reportInvalid(item, log, problem);
      collected.comment = comment;
      return;
    }
    case 'volume':
      collected.volume = {
        param,
        position,
        type: definition.type,
        value: readNumber(item, log, ErrorCode.INVALID_VOLUME, '0.1'),
      };
      return;
    case 'typedVolume':
      collected.volume = {
        param,
        position,
        type: undefined,
        value: readNumber(item, log, ErrorCode.INVALID_VOLUME, '0.1'),
      };
      return;
    case 'volumeType':
      collected.volumeType = readChoice(item, log, VOLUME_TYPES, ErrorCode.INVALID_VOLUME);
      return;
    case 'sl':
      collected.sl = { param, position, type: definition.unit, value: readNumber(item, log) };
      return;
    case 'typedSl':
      collected.sl = { param, position, type: undefined, value: readNumber(item, log) };
      return;
    case 'slType':
      collected.slType = readChoice(item, log, PRICE_UNITS, ErrorCode.INVALID_PARAMETER);
      return;
    case 'tp':
      collected.tp = { param, position, unit: definition.unit, value: readNumber(item, log) };
      return;
    case 'typedTp':
      if (entry.value.kind === 'json' && entry.value.json.kind === 'array') {
        return reportInvalid(
          item,
          log,
          'tp must be one number (with tpType); for several take-profit levels use tp1, tp2 … with pct1, pct2 …',
        );
      }
      collected.tp = { param, position, unit: undefined, value: readNumber(item, log) };
      return;
    case 'tpType':
      collected.tpType = readChoice(item, log, PRICE_UNITS, ErrorCode.INVALID_PARAMETER);
      return;
    case 'tpLevel':
    case 'tpShare': {
      if (definition.level > MAX_TP_LEVELS) {
        return reportInvalid(
          item,
          log,
          `${param} is beyond the last take-profit level; a signal has at most ${MAX_TP_LEVELS} (tp1 … tp${MAX_TP_LEVELS})`,
        );
      }
      if (definition.kind === 'tpLevel') {
        collected.levels.set(definition.level, {
          param,
          position,
          unit: definition.unit,
          value: readNumber(item, log),
        });
        return;
      }
      let share = readNumber(item, log, ErrorCode.INVALID_PARAMETER, '50');
      const problem = share === undefined ? undefined : shareProblem(param, share);
      if (problem !== undefined) {
        reportInvalid(item, log, problem);
        share = undefined;
      }
      collected.shares.set(definition.level, { param, position, value: share });
      return;
    }
    case 'entry':
      collected.entry = {
        param,
        position,
        type: definition.unit,
        value: readNumber(item, log, ErrorCode.INVALID_PARAMETER, '1.0850'),
      };
      return;
    case 'trail':
      collected.trail[definition.field] = { param, position, value: readNumber(item, log) };
      return;
    case 'breakeven':
      collected.breakeven[definition.field] = { param, position, value: readNumber(item, log) };
      return;
    case 'closePct':
    case 'closeLots': {
      const amount = readNumber(item, log, ErrorCode.INVALID_PARAMETER, definition.kind === 'closePct' ? '50' : '0.1');
      if (amount === undefined) return;
      const problem =
        definition.kind === 'closePct'
          ? closePercentProblem(param, amount)
          : positiveProblem(param, amount, 'lots to close');
      if (problem !== undefined) return reportInvalid(item, log, problem);
      collected.close = { param, position, value: definition.kind === 'closePct' ? { pct: amount } : { lots: amount } };
      return;
    }
    case 'opposite': {
      const reading = readFlagValue(entry.value, param);
      if (!reading.ok) return reportInvalid(item, log, reading.detail);
      if (reading.value) collected.opposite = definition.opposite;
      return;
    }
  }
}

function reportInvalid(
  item: AcceptedEntry,
  log: ProblemLog,
  detail: string,
  code: ErrorCode = ErrorCode.INVALID_PARAMETER,
): void {
  log.add(item.entry.position, code, detail, item.known.param);
}

/** The value as a number, or undefined when it is not one (reported under `code`). */
function readNumber(
  item: AcceptedEntry,
  log: ProblemLog,
  code: ErrorCode = ErrorCode.INVALID_PARAMETER,
  example = '20',
): number | undefined {
  const reading = readNumberValue(item.entry.value, item.known.param, example);
  if (reading.ok) return reading.value;
  reportInvalid(item, log, reading.detail, code);
  return undefined;
}

/** The value as one of `allowed` (trimmed, ASCII-case-insensitive); undefined value when it is none. */
function readChoice<T extends string>(
  item: AcceptedEntry,
  log: ProblemLog,
  allowed: readonly T[],
  code: ErrorCode,
): GivenParameter<T> {
  const { param } = item.known;
  const { position, value } = item.entry;
  const reading = readTextValue(value, param, allowed[0]!);
  if (!reading.ok) {
    reportInvalid(item, log, reading.detail, code);
    return { param, position, value: undefined };
  }
  const written = asciiLowerCase(reading.value.trim());
  if ((allowed as readonly string[]).includes(written)) return { param, position, value: written as T };
  reportInvalid(item, log, `${param} must be one of ${nameList(allowed, 'or')}, got ${quotedExcerpt(written)}`, code);
  return { param, position, value: undefined };
}
