/**
 * The signal rules (CONTRACT §4) applied to the entries of one body, whichever format it came
 * in: every name known, none repeated, every parameter applying to the action, no two variants
 * of one thing, every value in range, the relations between parameters kept. Every problem is
 * reported, in body order; only a body without any becomes a normalized signal (CONTRACT §5).
 */
import type { ErrorCode } from '../errors/catalog.js';
import { lookupAction, suggestActions } from './action-names.js';
import { scopeProblem } from './action-scope.js';
import { asciiLowerCase, asciiUpperCase } from './ascii-case.js';
import { commentProblem } from './comment-rules.js';
import { formatDecimal } from './decimal-number.js';
import { readFlagValue, readNumberValue, readTextValue } from './entry-value.js';
import type { GivenParameter } from './given-parameter.js';
import { nameList } from './name-list.js';
import { suggestNames } from './name-suggestions.js';
import type { KnownParameter, ParameterDefinition } from './parameter-table.js';
import { flatNamesForTypedKey, lookupParameter, MAX_TP_LEVELS, suggestableNames } from './parameter-table.js';
import type { ParseOutcome, SignalFormat } from './parse-signal.js';
import { ProblemLog } from './problem-log.js';
import { quotedExcerpt, shortened } from './quoted-excerpt.js';
import type { SignalEntry } from './signal-entry.js';
import type { Action, Breakeven, CloseAmount, Distance, NormalizedSignal, Opposite, PriceUnit, Trail, Volume, VolumeType } from './signal.js';
import { ACTIONS, PENDING_ACTIONS, PRICE_UNITS, VOLUME_TYPES } from './signal.js';
import { symbolProblem } from './symbol-rules.js';
import type { NumberedLevel, SingleTarget } from './take-profit-levels.js';
import { buildTakeProfit } from './take-profit-levels.js';
import {
  closePercentProblem,
  distanceProblem,
  nonNegativeProblem,
  positiveProblem,
  shareProblem,
  volumeProblem,
} from './value-ranges.js';

/** Where problems about something absent go: before everything the body holds. */
const BEFORE_BODY = -1;

interface Accepted {
  entry: SignalEntry;
  known: KnownParameter;
}

/** A volume, stop or entry given either flat (unit in the name) or typed (unit in *Type). */
interface TypedOrFlat<T> extends GivenParameter<number> {
  /** From the name; undefined for the JSON typed key. */
  type: T | undefined;
}

/** Everything the sender gave, read but not yet range-checked against its companions. */
interface Collected {
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

export function normalizeEntries(entries: readonly SignalEntry[], format: SignalFormat): ParseOutcome {
  const log = new ProblemLog();
  const accepted = acceptNames(entries, format, log);

  const symbol = readSymbol(accepted, format, log);
  const action = readAction(accepted, format, log);

  const collected: Collected = { levels: new Map(), shares: new Map(), trail: {}, breakeven: {} };
  const taken = new Map<string, Accepted>();
  for (const item of accepted) {
    const { entry, known } = item;
    const { definition, param } = known;
    if (definition.kind === 'symbol' || definition.kind === 'action') continue;
    // JSON `false` on a flag means "not set", exactly like leaving the key out.
    if (definition.kind === 'opposite' && entry.value.kind === 'json' && entry.value.json.kind === 'boolean' && !entry.value.json.value) {
      continue;
    }
    if (action !== undefined) {
      const detail = scopeProblem(definition, param, action);
      if (detail !== undefined) {
        log.add(entry.position, 'INVALID_PARAMETER', detail, param);
        continue;
      }
    }
    if (claimSlot(item, taken, log)) collect(item, collected, log);
  }

  const volume = buildVolume(collected, taken, format, log);
  const sl = buildTyped(collected.sl, collected.slType, 'sl', 'stop loss', action, log);
  const tp = buildTakeProfit(
    { single: collected.tp, tpType: collected.tpType, levels: collected.levels, shares: collected.shares, action },
    log,
  );
  const entry = buildTyped(collected.entry, undefined, 'entry', 'entry', action, log);
  if (action !== undefined && PENDING_ACTIONS.includes(action) && !taken.has('entry')) {
    const actionEntry = accepted.find((item) => item.known.definition.kind === 'action')!.entry;
    log.add(
      actionEntry.position,
      'ENTRY_REQUIRED',
      `${action} is a pending order and needs its entry: add one of entry_price, entry_pips or entry_percent`,
      'action',
    );
  }
  const trail = buildTrail(collected.trail, log);
  const breakeven = buildBreakeven(collected.breakeven, log);

  if (!log.isEmpty || symbol === undefined || action === undefined) return { ok: false, problems: log.inBodyOrder() };
  const signal: NormalizedSignal = { symbol, action };
  if (collected.comment !== undefined) signal.comment = collected.comment;
  if (volume !== undefined) signal.volume = volume;
  if (sl !== undefined) signal.sl = sl;
  if (tp !== undefined) signal.tp = tp;
  if (entry !== undefined) signal.entry = entry;
  if (trail !== undefined) signal.trail = trail;
  if (breakeven !== undefined) signal.breakeven = breakeven;
  if (collected.close?.value !== undefined) signal.close = collected.close.value;
  if (collected.opposite !== undefined) signal.opposite = collected.opposite;
  return { ok: true, signal };
}

/** Drops (and reports) unknown, misplaced and repeated names; the rest go on in body order. */
function acceptNames(entries: readonly SignalEntry[], format: SignalFormat, log: ProblemLog): Accepted[] {
  const accepted: Accepted[] = [];
  const seen = new Set<string>();
  let unknown = 0;
  entries.forEach((entry, index) => {
    const known = lookupParameter(entry.name, format);
    if (known === undefined) {
      unknown += 1;
      const detail = unknownParameterDetail(entry, entries[index - 1], format, unknown <= MAX_SUGGESTED_UNKNOWNS);
      log.add(entry.position, 'UNKNOWN_PARAMETER', detail, shortened(entry.name));
      return;
    }
    const { definition, param } = known;
    if (format === 'text' && (definition.kind === 'symbol' || definition.kind === 'action') && entry.positional !== true) {
      const place = definition.kind === 'symbol' ? 'first' : 'second';
      log.add(
        entry.position,
        'INVALID_PARAMETER',
        `in the text form the ${param} is the ${place} token itself (EURUSD,buy,...); remove ${param}=`,
        param,
      );
      return;
    }
    if (seen.has(entry.name)) {
      log.add(
        entry.position,
        isVolume(definition) ? 'INVALID_VOLUME' : 'INVALID_PARAMETER',
        `${param} is given more than once (names are case-insensitive); give it once`,
        param,
      );
      return;
    }
    seen.add(entry.name);
    accepted.push({ entry, known });
  });
  return accepted;
}

/**
 * Did-you-mean costs an edit distance per known name; a garbage body of thousands of unknown
 * names gets suggestions for the first ones only, so it cannot buy much CPU per request.
 */
const MAX_SUGGESTED_UNKNOWNS = 32;

function unknownParameterDetail(entry: SignalEntry, previous: SignalEntry | undefined, format: SignalFormat, suggest: boolean): string {
  const shown = quotedExcerpt(entry.name);
  const flatNames = format === 'text' ? flatNamesForTypedKey(entry.name) : undefined;
  if (flatNames !== undefined) {
    // The JSON typed keys (sl, volume, …) do not exist in text, where the unit is in the name.
    return `unknown parameter ${shown}; did you mean ${nameList(flatNames, 'or')}?`;
  }
  // `sl_pips=1,5` splits at the comma into sl_pips=1 and a bare 5.
  if (
    /^\d+$/.test(entry.name) &&
    entry.value.kind === 'bare' &&
    previous?.value.kind === 'text' &&
    /^[+-]?\d+$/.test(previous.value.text)
  ) {
    return `unknown parameter ${shown}; if you meant ${previous.name}=${previous.value.text}.${entry.name}, write decimals with a point, not a comma`;
  }
  const level = /^(?:tp|pct)(\d+)/.exec(entry.name);
  const levelHint = level !== null && Number(level[1]) >= 1 && Number(level[1]) <= MAX_TP_LEVELS ? Number(level[1]) : 1;
  const suggestions = suggest ? suggestNames(entry.name, suggestableNames(format, levelHint)) : [];
  if (suggestions.length > 0) return `unknown parameter ${shown}; did you mean ${nameList(suggestions, 'or')}?`;
  return `unknown parameter ${shown}; it is not a signal parameter, so check its spelling or remove it`;
}

function readSymbol(accepted: readonly Accepted[], format: SignalFormat, log: ProblemLog): string | undefined {
  const given = accepted.find((item) => item.known.definition.kind === 'symbol');
  const missing =
    format === 'text' ? 'the text form starts with it, like EURUSD,buy' : 'add it, like "symbol":"EURUSD"';
  if (given === undefined) {
    log.add(BEFORE_BODY - 1, 'MISSING_SYMBOL', `symbol is missing; ${missing}`, 'symbol');
    return undefined;
  }
  const { entry } = given;
  if (entry.value.kind === 'json' && entry.value.json.kind === 'null') {
    log.add(entry.position, 'MISSING_SYMBOL', `symbol is null; ${missing}`, 'symbol');
    return undefined;
  }
  const text = readTextValue(entry.value, 'symbol', 'EURUSD');
  if (!text.ok) {
    log.add(entry.position, 'INVALID_PARAMETER', text.detail, 'symbol');
    return undefined;
  }
  const symbol = asciiUpperCase(text.value.trim());
  if (symbol === '') {
    log.add(entry.position, 'MISSING_SYMBOL', `symbol is empty; ${missing}`, 'symbol');
    return undefined;
  }
  const problem = symbolProblem(symbol, format);
  if (problem !== undefined) {
    log.add(entry.position, 'INVALID_PARAMETER', problem, 'symbol');
    return undefined;
  }
  return symbol;
}

function readAction(accepted: readonly Accepted[], format: SignalFormat, log: ProblemLog): Action | undefined {
  const given = accepted.find((item) => item.known.definition.kind === 'action');
  const missing =
    format === 'text' ? 'it is the second token, like EURUSD,buy' : 'add it, like "action":"buy"';
  if (given === undefined) {
    // In text the action's place is the second token, after any problem with the symbol.
    log.add(format === 'text' ? 1 : BEFORE_BODY, 'MISSING_ACTION', `action is missing; ${missing}`, 'action');
    return undefined;
  }
  const { entry } = given;
  if (entry.value.kind === 'json' && entry.value.json.kind === 'null') {
    log.add(entry.position, 'MISSING_ACTION', `action is null; ${missing}`, 'action');
    return undefined;
  }
  const text = readTextValue(entry.value, 'action', 'buy');
  if (!text.ok) {
    log.add(entry.position, 'INVALID_PARAMETER', text.detail, 'action');
    return undefined;
  }
  const written = asciiLowerCase(text.value.trim());
  if (written === '') {
    log.add(entry.position, 'MISSING_ACTION', `action is empty; ${missing}`, 'action');
    return undefined;
  }
  const action = lookupAction(written);
  if (action !== undefined) return action;
  const suggestions = suggestActions(written);
  const hint =
    format === 'text' && written.includes('=')
      ? '; the second token is the action itself, like EURUSD,buy,sl_pips=20'
      : suggestions.length > 0
        ? `; did you mean ${nameList(suggestions, 'or')}?`
        : `; use one of ${nameList([...ACTIONS], 'or')}`;
  log.add(entry.position, 'UNKNOWN_ACTION', `unknown action ${quotedExcerpt(written)}${hint}`, 'action');
  return undefined;
}

function isVolume(definition: ParameterDefinition): boolean {
  return definition.kind === 'volume' || definition.kind === 'typedVolume' || definition.kind === 'volumeType';
}

/** The one thing a parameter sets; two parameters setting one thing are variants of it. */
function slotOf(definition: ParameterDefinition): string {
  switch (definition.kind) {
    case 'volume':
    case 'typedVolume':
      return 'volume';
    case 'sl':
    case 'typedSl':
      return 'sl';
    case 'tp':
    case 'typedTp':
      return 'tp';
    case 'tpLevel':
      return `tp${definition.level}`;
    case 'tpShare':
      return `pct${definition.level}`;
    case 'trail':
      return `trail_${definition.field}`;
    case 'breakeven':
      return `be_${definition.field}`;
    case 'closePct':
    case 'closeLots':
      return 'close';
    default:
      return definition.kind;
  }
}

/** Takes the parameter's slot, or reports the variant that took it first. */
function claimSlot(item: Accepted, taken: Map<string, Accepted>, log: ProblemLog): boolean {
  const { definition, param } = item.known;
  const slot = slotOf(definition);
  let earlier = taken.get(slot);
  // A single target and numbered levels are two ways of giving take profits.
  if (earlier === undefined && (definition.kind === 'tp' || definition.kind === 'typedTp')) {
    earlier = [...taken.values()].find((other) => other.known.definition.kind === 'tpLevel');
  }
  if (earlier === undefined && definition.kind === 'tpLevel') earlier = taken.get('tp');
  if (earlier === undefined) {
    taken.set(slot, item);
    return true;
  }
  const first = earlier.known.param;
  const position = item.entry.position;
  const code: ErrorCode = isVolume(definition) ? 'INVALID_VOLUME' : 'INVALID_PARAMETER';
  log.add(position, code, conflictDetail(definition, param, earlier.known.definition, first), param);
  return false;
}

function conflictDetail(definition: ParameterDefinition, param: string, earlier: ParameterDefinition, first: string): string {
  const typedMix = definition.kind.startsWith('typed') !== earlier.kind.startsWith('typed');
  switch (definition.kind) {
    case 'volume':
    case 'typedVolume':
      return `${param} and ${first} both give the volume; give only one volume parameter${typedMix ? ' (in JSON either volume with volumeType, or one vol_* key)' : ''}`;
    case 'sl':
    case 'typedSl':
      return `${param} and ${first} both give the stop loss; give only one${typedMix ? ' (in JSON either sl with slType, or one of sl_pips, sl_price, sl_percent)' : ' of sl_pips, sl_price, sl_percent'}`;
    case 'tp':
    case 'typedTp':
    case 'tpLevel':
      if (earlier.kind === 'tpLevel' && definition.kind === 'tpLevel') {
        return `${param} and ${first} both give take-profit level ${definition.level}; give it once`;
      }
      if (earlier.kind === 'tpLevel' || definition.kind === 'tpLevel') {
        return `${param} and ${first} are two ways of giving take profits; use one tp_* for a single target, or tp1, tp2 … for several levels`;
      }
      return `${param} and ${first} both give the take profit; give only one${typedMix ? ' (in JSON either tp with tpType, or one of tp_pips, tp_price, tp_percent)' : ' of tp_pips, tp_price, tp_percent'}`;
    case 'entry':
      return `${param} and ${first} both give the pending entry; give only one of entry_price, entry_pips, entry_percent`;
    case 'closePct':
    case 'closeLots':
      return `${param} and ${first} both say how much to close; give pct (percent of each position) or pct_lots (lots), not both`;
    case 'opposite':
      return `${param} and ${first} exclude each other: exop only closes the opposite positions, exent closes them and opens the new one; give one`;
    default:
      return `${param} is given more than once; give it once`;
  }
}

/** Reads the value an accepted parameter takes and files it under what it sets. */
function collect(item: Accepted, collected: Collected, log: ProblemLog): void {
  const { entry, known } = item;
  const { definition, param } = known;
  const { position } = entry;
  const invalid = (detail: string, code: ErrorCode = 'INVALID_PARAMETER'): void => log.add(position, code, detail, param);
  const number = (code: ErrorCode = 'INVALID_PARAMETER', example = '20'): number | undefined => {
    const reading = readNumberValue(entry.value, param, example);
    if (reading.ok) return reading.value;
    invalid(reading.detail, code);
    return undefined;
  };
  const choice = <T extends string>(allowed: readonly T[], code: ErrorCode): GivenParameter<T> => {
    const reading = readTextValue(entry.value, param, allowed[0]!);
    if (!reading.ok) {
      invalid(reading.detail, code);
      return { param, position, value: undefined };
    }
    const written = asciiLowerCase(reading.value.trim());
    if ((allowed as readonly string[]).includes(written)) return { param, position, value: written as T };
    invalid(`${param} must be one of ${nameList(allowed, 'or')}, got ${quotedExcerpt(written)}`, code);
    return { param, position, value: undefined };
  };

  switch (definition.kind) {
    case 'symbol':
    case 'action':
      return;
    case 'comment': {
      const reading = readTextValue(entry.value, param, 'my strategy');
      if (!reading.ok) return invalid(reading.detail);
      const comment = reading.value.trim();
      const problem = commentProblem(comment);
      if (problem !== undefined) return invalid(problem);
      collected.comment = comment;
      return;
    }
    case 'volume':
      collected.volume = { param, position, type: definition.type, value: number('INVALID_VOLUME', '0.1') };
      return;
    case 'typedVolume':
      collected.volume = { param, position, type: undefined, value: number('INVALID_VOLUME', '0.1') };
      return;
    case 'volumeType':
      collected.volumeType = choice(VOLUME_TYPES, 'INVALID_VOLUME');
      return;
    case 'sl':
      collected.sl = { param, position, type: definition.unit, value: number() };
      return;
    case 'typedSl':
      collected.sl = { param, position, type: undefined, value: number() };
      return;
    case 'slType':
      collected.slType = choice(PRICE_UNITS, 'INVALID_PARAMETER');
      return;
    case 'tp':
      collected.tp = { param, position, unit: definition.unit, value: number() };
      return;
    case 'typedTp':
      if (entry.value.kind === 'json' && entry.value.json.kind === 'array') {
        return invalid('tp must be one number (with tpType); for several take-profit levels use tp1, tp2 … with pct1, pct2 …');
      }
      collected.tp = { param, position, unit: undefined, value: number() };
      return;
    case 'tpType':
      collected.tpType = choice(PRICE_UNITS, 'INVALID_PARAMETER');
      return;
    case 'tpLevel':
    case 'tpShare': {
      if (definition.level > MAX_TP_LEVELS) {
        return invalid(`${param} is beyond the last take-profit level; a signal has at most ${MAX_TP_LEVELS} (tp1 … tp${MAX_TP_LEVELS})`);
      }
      if (definition.kind === 'tpLevel') {
        collected.levels.set(definition.level, { param, position, unit: definition.unit, value: number() });
        return;
      }
      let share = number('INVALID_PARAMETER', '50');
      const problem = share === undefined ? undefined : shareProblem(param, share);
      if (problem !== undefined) {
        invalid(problem);
        share = undefined;
      }
      collected.shares.set(definition.level, { param, position, value: share });
      return;
    }
    case 'entry':
      collected.entry = { param, position, type: definition.unit, value: number('INVALID_PARAMETER', '1.0850') };
      return;
    case 'trail':
      collected.trail[definition.field] = { param, position, value: number() };
      return;
    case 'breakeven':
      collected.breakeven[definition.field] = { param, position, value: number() };
      return;
    case 'closePct':
    case 'closeLots': {
      const amount = number('INVALID_PARAMETER', definition.kind === 'closePct' ? '50' : '0.1');
      if (amount === undefined) return;
      const problem = definition.kind === 'closePct' ? closePercentProblem(param, amount) : positiveProblem(param, amount, 'lots to close');
      if (problem !== undefined) return invalid(problem);
      collected.close = { param, position, value: definition.kind === 'closePct' ? { pct: amount } : { lots: amount } };
      return;
    }
    case 'opposite': {
      const reading = readFlagValue(entry.value, param);
      if (!reading.ok) return invalid(reading.detail);
      if (reading.value) collected.opposite = definition.opposite;
      return;
    }
  }
}

const RISK_VOLUMES: readonly VolumeType[] = ['dollar', 'pctbal_loss', 'pcteq_loss'];

function buildVolume(collected: Collected, taken: ReadonlyMap<string, Accepted>, format: SignalFormat, log: ProblemLog): Volume | undefined {
  const { volume, volumeType } = collected;
  if (volumeType !== undefined && (volume === undefined || volume.type !== undefined)) {
    const detail =
      volume === undefined
        ? 'volumeType is given without volume; add volume (the amount) or remove volumeType'
        : `volumeType goes with volume; ${volume.param} already carries its type in its name, so remove volumeType`;
    log.add(volumeType.position, 'INVALID_VOLUME', detail, volumeType.param);
    return undefined;
  }
  if (volume === undefined) return undefined;
  const typeUnreadable = volume.type === undefined && volumeType !== undefined && volumeType.value === undefined;
  const type = typeUnreadable ? undefined : (volume.type ?? volumeType?.value ?? 'lots');
  const label = volume.type === undefined && type !== undefined ? `${volume.param} (${type})` : volume.param;
  const problem = volume.value === undefined ? undefined : volumeProblem(label, type, volume.value);
  if (problem !== undefined) log.add(volume.position, 'INVALID_VOLUME', problem, volume.param);
  const needsStop = type !== undefined && RISK_VOLUMES.includes(type) && !taken.has('sl');
  if (needsStop) {
    const stops = format === 'json' ? 'sl_pips, sl_price or sl_percent (or sl with slType)' : 'sl_pips, sl_price or sl_percent';
    log.add(
      volume.position,
      'SL_REQUIRED',
      `${label} sizes the trade from the loss at the stop loss, so it needs one: add ${stops}`,
      volume.param,
    );
  }
  if (problem !== undefined || needsStop || volume.value === undefined || type === undefined) return undefined;
  return { type, value: volume.value };
}

/** A stop loss or entry: flat (unit in the name) or, for the stop, JSON typed with slType. */
function buildTyped(
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
    log.add(typeKey.position, 'INVALID_PARAMETER', detail, typeKey.param);
    return undefined;
  }
  if (given === undefined || given.value === undefined) return undefined;
  if (given.type === undefined && typeKey !== undefined && typeKey.value === undefined) return undefined;
  const unit = given.type ?? typeKey?.value ?? 'pips';
  const label = given.type === undefined ? `${given.param} (in ${unit})` : given.param;
  const problem = distanceProblem(label, role, unit, given.value, action);
  if (problem !== undefined) {
    log.add(given.position, 'INVALID_PARAMETER', problem, given.param);
    return undefined;
  }
  return { type: unit, value: given.value };
}

function buildTrail(given: Collected['trail'], log: ProblemLog): Trail | undefined {
  const { trigger, distance, step } = given;
  if (distance === undefined) {
    for (const orphan of [trigger, step]) {
      if (orphan === undefined) continue;
      log.add(
        orphan.position,
        'INVALID_PARAMETER',
        `${orphan.param} needs trail_distance (how many pips the stop trails behind the price); add trail_distance or remove ${orphan.param}`,
        orphan.param,
      );
    }
    return undefined;
  }
  const checks = [
    [trigger, (value: number) => nonNegativeProblem('trail_trigger', value, 'pips of profit before trailing starts')],
    [distance, (value: number) => positiveProblem('trail_distance', value, 'pips behind the price')],
    [step, (value: number) => nonNegativeProblem('trail_step', value, 'pips the price must advance per move')],
  ] as const;
  let sound = true;
  for (const [parameter, check] of checks) {
    if (parameter === undefined) continue;
    if (parameter.value === undefined) {
      sound = false;
      continue;
    }
    const problem = check(parameter.value);
    if (problem !== undefined) {
      log.add(parameter.position, 'INVALID_PARAMETER', problem, parameter.param);
      sound = false;
    }
  }
  if (!sound) return undefined;
  return { trigger: trigger?.value ?? 0, distance: distance.value!, step: step?.value ?? 0 };
}

function buildBreakeven(given: Collected['breakeven'], log: ProblemLog): Breakeven | undefined {
  const { trigger, offset } = given;
  if (trigger === undefined) {
    if (offset !== undefined) {
      log.add(
        offset.position,
        'INVALID_PARAMETER',
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
      log.add(parameter.position, 'INVALID_PARAMETER', problem, parameter.param);
      sound = false;
    }
  }
  if (!sound) return undefined;
  const triggerPips = trigger.value!;
  const offsetPips = offset?.value ?? 0;
  if (offset !== undefined && offsetPips > 0 && offsetPips >= triggerPips) {
    log.add(
      offset.position,
      'INVALID_PARAMETER',
      `be_offset (${formatDecimal(offsetPips)}) must be below be_trigger (${formatDecimal(triggerPips)}): when the stop moves the trade is only ${formatDecimal(triggerPips)} pips in profit, so it cannot lock in ${formatDecimal(offsetPips)}`,
      offset.param,
    );
    return undefined;
  }
  return { trigger: triggerPips, offset: offsetPips };
}
