/**
 * Action names as senders write them: the canonical actions plus their aliases (docs/signal-language.md),
 * compared ASCII-case-insensitively.
 */
import { suggestNames } from './name-suggestions.js';
import type { Action } from './signal.js';
import { ACTIONS } from './signal.js';

const ALIASES: ReadonlyMap<string, Action> = new Map<string, Action>([
  ['long', 'buy'],
  ['short', 'sell'],
  ['closelong', 'closebuy'],
  ['closeshort', 'closesell'],
]);

/** Every name an action may be written as, in suggestion order: the canonical ones, then the aliases. */
const WRITTEN_ACTIONS: ReadonlyMap<string, Action> = new Map<string, Action>([
  ...ACTIONS.map((action): [string, Action] => [action, action]),
  ...ALIASES,
]);
const SUGGESTABLE_ACTIONS: readonly string[] = [...WRITTEN_ACTIONS.keys()];

/** `written` must already be trimmed and ASCII-lower-cased. */
export function lookupAction(written: string): Action | undefined {
  return WRITTEN_ACTIONS.get(written);
}

export function suggestActions(written: string): string[] {
  return suggestNames(written, SUGGESTABLE_ACTIONS);
}
