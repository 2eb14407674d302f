/**
 * The detail for a name that is not a signal parameter: what the sender probably meant. Unknown
 * names are never ignored (a mistyped sl_pip must not open a trade without a stop), so the
 * detail has to make the fix obvious.
 */
import { nameList } from './name-list.js';
import { suggestNames } from './name-suggestions.js';
import { flatNamesForTypedKey, MAX_TP_LEVELS, suggestableNames } from './parameter-table.js';
import type { SignalFormat } from './signal-format.js';
import { quotedExcerpt } from './quoted-excerpt.js';
import type { SignalEntry } from './signal-entry.js';

/**
 * Did-you-mean costs an edit distance per known name; a garbage body of thousands of unknown
 * names gets suggestions for the first ones only, so it cannot buy much CPU per request.
 */
export const MAX_SUGGESTED_UNKNOWNS = 32;

export function unknownParameterDetail(entry: SignalEntry, previous: SignalEntry | undefined, format: SignalFormat, suggest: boolean): string {
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
