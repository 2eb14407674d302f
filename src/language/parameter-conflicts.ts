/**
 * Two parameters that set the same thing are variants of it (sl_pips with sl_price, tp_pips with
 * tp1, exop with exent, a typed key with its flat twin, …): the first one given stands and every
 * later one is reported, INVALID_VOLUME for volumes and INVALID_PARAMETER otherwise.
 */
import { ErrorCode } from '../errors/catalog.js';
import type { ParameterDefinition } from './parameter-table.js';
import { isVolumeParameter } from './parameter-table.js';
import type { ProblemLog } from './problem-log.js';
import type { AcceptedEntry } from './signal-entry.js';

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
export function claimSlot(item: AcceptedEntry, taken: Map<string, AcceptedEntry>, log: ProblemLog): boolean {
  const { definition, param } = item.known;
  const slot = slotOf(definition);
  let earlier = taken.get(slot);
  // A single target and numbered levels are two ways of giving take profits.
  if (earlier === undefined && (definition.kind === 'tp' || definition.kind === 'typedTp')) {
    earlier = firstLevelTaken(taken);
  }
  if (earlier === undefined && definition.kind === 'tpLevel') earlier = taken.get('tp');
  if (earlier === undefined) {
    taken.set(slot, item);
    return true;
  }
  const first = earlier.known.param;
  const position = item.entry.position;
  const code: ErrorCode = isVolumeParameter(definition) ? ErrorCode.INVALID_VOLUME : ErrorCode.INVALID_PARAMETER;
  log.add(position, code, conflictDetail(definition, param, earlier.known.definition, first), param);
  return false;
}

/** The first numbered take-profit level that took its slot, if any (slots keep insertion order). */
function firstLevelTaken(taken: ReadonlyMap<string, AcceptedEntry>): AcceptedEntry | undefined {
  for (const other of taken.values()) {
    if (other.known.definition.kind === 'tpLevel') return other;
  }
  return undefined;
}

function conflictDetail(
  definition: ParameterDefinition,
  param: string,
  earlier: ParameterDefinition,
  first: string,
): string {
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
