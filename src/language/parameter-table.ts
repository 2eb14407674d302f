/**
 * Every parameter name a signal may carry (docs/signal-language.md, "Parameters"), what it
 * means, and in which body format it exists. Names are looked up ASCII-lower-cased.
 */
import type { SignalFormat } from './signal-format.js';
import type { Opposite, PriceUnit, VolumeType } from './signal.js';
import { PRICE_UNITS } from './signal.js';

export type ParameterDefinition =
  | { kind: 'symbol' }
  | { kind: 'action' }
  | { kind: 'comment' }
  /** vol, vol_lots, vol_pctbal, …: the type is in the name. */
  | { kind: 'volume'; type: VolumeType }
  /** JSON typed style: `volume` with `volumeType`. */
  | { kind: 'typedVolume' }
  | { kind: 'volumeType' }
  | { kind: 'sl'; unit: PriceUnit }
  | { kind: 'typedSl' }
  | { kind: 'slType' }
  /** tp_pips, tp_price, tp_percent: one target for the whole position. */
  | { kind: 'tp'; unit: PriceUnit }
  | { kind: 'typedTp' }
  | { kind: 'tpType' }
  /** tpN or tpN_<unit>; a bare tpN takes the unit of tp1. */
  | { kind: 'tpLevel'; level: number; unit: PriceUnit | undefined }
  | { kind: 'tpShare'; level: number }
  | { kind: 'entry'; unit: PriceUnit }
  | { kind: 'trail'; field: 'trigger' | 'distance' | 'step' }
  | { kind: 'breakeven'; field: 'trigger' | 'offset' }
  | { kind: 'closePct' }
  | { kind: 'closeLots' }
  | { kind: 'opposite'; opposite: Opposite };

export interface KnownParameter {
  /** The name used in problems: lower case, except the JSON typed keys' own spelling. */
  param: string;
  definition: ParameterDefinition;
}

/** More levels than this is a template bug rather than a trading plan. */
export const MAX_TP_LEVELS = 10;

const FLAT_PARAMETERS: ReadonlyMap<string, ParameterDefinition> = new Map<string, ParameterDefinition>([
  ['symbol', { kind: 'symbol' }],
  ['action', { kind: 'action' }],
  ['comment', { kind: 'comment' }],
  ['vol', { kind: 'volume', type: 'lots' }],
  ['vol_lots', { kind: 'volume', type: 'lots' }],
  ['vol_pctbal', { kind: 'volume', type: 'pctbal' }],
  ['vol_pcteq', { kind: 'volume', type: 'pcteq' }],
  ['vol_dollar', { kind: 'volume', type: 'dollar' }],
  ['vol_pctbal_loss', { kind: 'volume', type: 'pctbal_loss' }],
  ['vol_pcteq_loss', { kind: 'volume', type: 'pcteq_loss' }],
  ...PRICE_UNITS.map((unit): [string, ParameterDefinition] => [`sl_${unit}`, { kind: 'sl', unit }]),
  ...PRICE_UNITS.map((unit): [string, ParameterDefinition] => [`tp_${unit}`, { kind: 'tp', unit }]),
  ...PRICE_UNITS.map((unit): [string, ParameterDefinition] => [`entry_${unit}`, { kind: 'entry', unit }]),
  ['trail_trigger', { kind: 'trail', field: 'trigger' }],
  ['trail_distance', { kind: 'trail', field: 'distance' }],
  ['trail_step', { kind: 'trail', field: 'step' }],
  ['be_trigger', { kind: 'breakeven', field: 'trigger' }],
  ['be_offset', { kind: 'breakeven', field: 'offset' }],
  ['pct', { kind: 'closePct' }],
  ['pct_lots', { kind: 'closeLots' }],
  ['exop', { kind: 'opposite', opposite: 'exit' }],
  ['exent', { kind: 'opposite', opposite: 'exit_and_enter' }],
]);

/**
 * Every known parameter is made here, its definition given one object shape (the fields its
 * kind lacks set to undefined): `definition.kind` is read several times per entry on the hot
 * path, and with one shape those reads stay monomorphic (about 8% of a whole parse).
 */
function knownParameter(param: string, definition: ParameterDefinition): KnownParameter {
  const uniform = {
    kind: definition.kind,
    type: undefined,
    unit: undefined,
    level: undefined,
    field: undefined,
    opposite: undefined,
  };
  return { param, definition: Object.assign(uniform, definition) };
}

/** JSON only; keyed by the lower-cased key, valued with the key's own spelling. */
const TYPED_PARAMETERS: ReadonlyMap<string, KnownParameter> = new Map<string, KnownParameter>([
  ['volume', knownParameter('volume', { kind: 'typedVolume' })],
  ['volumetype', knownParameter('volumeType', { kind: 'volumeType' })],
  ['sl', knownParameter('sl', { kind: 'typedSl' })],
  ['sltype', knownParameter('slType', { kind: 'slType' })],
  ['tp', knownParameter('tp', { kind: 'typedTp' })],
  ['tptype', knownParameter('tpType', { kind: 'tpType' })],
]);

const TP_LEVEL = /^tp([1-9]\d*)(?:_(pips|price|percent))?$/;
const TP_SHARE = /^pct([1-9]\d*)$/;

function levelDefinition(level: number, unit: PriceUnit | undefined): ParameterDefinition {
  return { kind: 'tpLevel', level, unit };
}

/**
 * Every name of both formats that is its own `param` (flat names, and the numbered levels a
 * signal may hold), built once so the usual lookup is one Map get and allocates nothing.
 * Levels beyond MAX_TP_LEVELS still parse (to be reported), through the patterns above.
 */
const KNOWN_BY_NAME: ReadonlyMap<string, KnownParameter> = knownByName();

function knownByName(): Map<string, KnownParameter> {
  const known = new Map<string, KnownParameter>();
  const add = (name: string, definition: ParameterDefinition): void => {
    known.set(name, knownParameter(name, definition));
  };
  for (const [name, definition] of FLAT_PARAMETERS) add(name, definition);
  for (let level = 1; level <= MAX_TP_LEVELS; level += 1) {
    add(`tp${level}`, levelDefinition(level, undefined));
    for (const unit of PRICE_UNITS) add(`tp${level}_${unit}`, levelDefinition(level, unit));
    add(`pct${level}`, { kind: 'tpShare', level });
  }
  return known;
}

/** `name` must already be ASCII-lower-cased. */
export function lookupParameter(name: string, format: SignalFormat): KnownParameter | undefined {
  const known = KNOWN_BY_NAME.get(name);
  if (known !== undefined) return known;
  if (format === 'json') {
    const typed = TYPED_PARAMETERS.get(name);
    if (typed !== undefined) return typed;
  }
  const level = TP_LEVEL.exec(name);
  if (level !== null) return knownParameter(name, levelDefinition(Number(level[1]), level[2] as PriceUnit | undefined));
  const share = TP_SHARE.exec(name);
  if (share !== null) return knownParameter(name, { kind: 'tpShare', level: Number(share[1]) });
  return undefined;
}

/** Volume parameters report their problems as INVALID_VOLUME. */
export function isVolumeParameter(definition: ParameterDefinition): boolean {
  return definition.kind === 'volume' || definition.kind === 'typedVolume' || definition.kind === 'volumeType';
}

/** Names offered as did-you-mean candidates, in table order (the order they are suggested in). */
export function suggestableNames(format: SignalFormat, level: number): string[] {
  const flat = [...FLAT_PARAMETERS.keys()].filter(
    (name) => format === 'json' || (name !== 'symbol' && name !== 'action'),
  );
  const levels = [`tp${level}`, ...PRICE_UNITS.map((unit) => `tp${level}_${unit}`), `pct${level}`];
  const typed = format === 'json' ? [...TYPED_PARAMETERS.values()].map((known) => known.param) : [];
  return [...flat, ...levels, ...typed];
}

/** Text has no typed keys; a sender writing one there gets pointed at the flat names. */
export function flatNamesForTypedKey(name: string): string[] | undefined {
  switch (name) {
    case 'volume':
    case 'volumetype':
      return ['vol', 'vol_pctbal', 'vol_pcteq', 'vol_dollar', 'vol_pctbal_loss', 'vol_pcteq_loss'];
    case 'sl':
    case 'sltype':
      return PRICE_UNITS.map((unit) => `sl_${unit}`);
    case 'tp':
    case 'tptype':
      return PRICE_UNITS.map((unit) => `tp_${unit}`);
    default:
      return undefined;
  }
}

/** A parameter as the API description lists it; numbered names are given as a pattern. */
export interface DocumentedParameter {
  /** The name, or for numbered levels a pattern such as `tp{N}_price`. */
  name: string;
  /** For numbered names: the regular expression the name matches (lower case). */
  pattern?: string;
  kind: ParameterDefinition['kind'];
  /** `text` and `json`, or `json` only for the typed keys. */
  formats: readonly SignalFormat[];
}

/**
 * Every parameter of the table, for the API description: what is added to the table here
 * appears in GET /api/openapi.json without anything else to change.
 */
export function documentedParameters(): DocumentedParameter[] {
  const both: readonly SignalFormat[] = ['text', 'json'];
  const flat = [...FLAT_PARAMETERS].map(([name, definition]): DocumentedParameter => ({
    name,
    kind: definition.kind,
    formats: both,
  }));
  const units = PRICE_UNITS.join('|');
  const levels: DocumentedParameter[] = [
    { name: 'tp{N}', pattern: '^tp[1-9][0-9]*$', kind: 'tpLevel', formats: both },
    { name: `tp{N}_{${units}}`, pattern: `^tp[1-9][0-9]*_(${units})$`, kind: 'tpLevel', formats: both },
    { name: 'pct{N}', pattern: '^pct[1-9][0-9]*$', kind: 'tpShare', formats: both },
  ];
  const typed = [...TYPED_PARAMETERS.values()].map((known): DocumentedParameter => ({
    name: known.param,
    kind: known.definition.kind,
    formats: ['json'],
  }));
  return [...flat, ...levels, ...typed];
}
