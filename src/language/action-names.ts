/**
 * Action names as senders write them: the canonical actions plus the aliases of CONTRACT §4,
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

/** `written` must already be trimmed and ASCII-lower-cased. */
export function lookupAction(written: string): Action | undefined {
  return (ACTIONS as readonly string[]).includes(written) ? (written as Action) : ALIASES.get(written);
}

export function suggestActions(written: string): string[] {
  return suggestNames(written, [...ACTIONS, ...ALIASES.keys()]);
}
