/**
 * The detail for a name that is not a signal parameter: what the sender probably meant. Unknown
 * names are never ignored (a mistyped sl_pip must not open a trade without a stop), so the
 * detail has to make the fix obvious.
 */
import { commaMayGroupThousands } from './decimal-number.js';
import { nameList } from './name-list.js';
import { suggestNames } from './name-suggestions.js';
import { flatNamesForTypedKey, MAX_TP_LEVELS, suggestableNames } from './parameter-table.js';
import type { SignalFormat } from './signal-format.js';
import { quotedExcerpt, shortened } from './quoted-excerpt.js';
import type { SignalEntry } from './signal-entry.js';

/**
 * Did-you-mean costs an edit distance per known name; a garbage body of thousands of unknown
 * names gets suggestions for the first ones only, so it cannot buy much CPU per request.
 */
export const MAX_SUGGESTED_UNKNOWNS = 32;

export function unknownParameterDetail(
  entries: readonly SignalEntry[],
  index: number,
  format: SignalFormat,
  suggest: boolean,
): string {
  const entry = entries[index]!;
  const previous = entries[index - 1];
  const shown = quotedExcerpt(entry.name);
  const flatNames = format === 'text' ? flatNamesForTypedKey(entry.name) : undefined;
  if (flatNames !== undefined) {
    // The JSON typed keys (sl, volume, …) do not exist in text, where the unit is in the name.
    return `unknown parameter ${shown}; did you mean ${nameList(flatNames, 'or')}?`;
  }
  // `sl_pips=1,5` splits at the comma into sl_pips=1 and a bare 5.
  if (isDigitRun(entry) && previous?.value.kind === 'text' && /^[+-]?\d+$/.test(previous.value.text)) {
    // The whole number as written: `1,000,000` splits into three entries.
    let number = `${previous.value.text},${entry.name}`;
    for (let next = index + 1; next < entries.length && !number.includes('.') && isDigitRun(entries[next]!); next += 1)
      number += `,${entries[next]!.name}`;
    // Offered only where a decimal comma is the one reading: `39,000` may mean 39000 or 39.0,
    // and offering either could move a stop a thousandfold.
    if (/^[+-]?\d+,\d+$/.test(number) && !commaMayGroupThousands(number)) {
      return `unknown parameter ${shown}; if you meant ${previous.name}=${number.replace(',', '.')}, write decimals with a point, not a comma`;
    }
    const written = `${previous.name}=${number}`;
    return `unknown parameter ${shown}; commas separate parameters, so ${shortened(written)} was read as ${shortened(`${previous.name}=${previous.value.text}`)} followed by ${shortened(number.slice(number.indexOf(',') + 1))}: write numbers without a thousands separator, and decimals with a point`;
  }
  const level = /^(?:tp|pct)(\d+)/.exec(entry.name);
  const levelHint = level !== null && Number(level[1]) >= 1 && Number(level[1]) <= MAX_TP_LEVELS ? Number(level[1]) : 1;
  const suggestions = suggest ? suggestNames(entry.name, suggestableNames(format, levelHint)) : [];
  if (suggestions.length > 0) return `unknown parameter ${shown}; did you mean ${nameList(suggestions, 'or')}?`;
  return `unknown parameter ${shown}; it is not a signal parameter, so check its spelling or remove it`;
}

/** Bare digits (the last group may have a fraction): what follows a comma inside a number once the comma split it off. */
function isDigitRun(entry: SignalEntry): boolean {
  return entry.value.kind === 'bare' && /^\d+(?:\.\d+)?$/.test(entry.name);
}
