/**
 * "Did you mean …?" for unknown parameter names and actions: the family of a stem (`entry` →
 * entry_pips, entry_price, entry_percent); else the closest near misses by edit distance
 * (`sl_pip` → sl_pips); else prefix matches either way (`volume` → vol); else the names it ends
 * (`lots` → vol_lots, pct_lots).
 */

export const MAX_SUGGESTIONS = 4;

export function suggestNames(written: string, candidates: readonly string[]): string[] {
  if (written === '') return [];
  const threshold = written.length <= 3 ? 1 : written.length <= 7 ? 2 : 3;
  // Distances above the threshold only order prefix matches; the length gap is enough there.
  const scored = candidates
    .filter((name) => name !== written)
    .map((name, order) => {
      const gap = Math.abs(name.length - written.length);
      return { name, order, distance: gap > threshold ? gap + threshold : editDistance(written, name) };
    });
  const byCloseness = (a: { distance: number; order: number }, b: { distance: number; order: number }): number =>
    a.distance - b.distance || a.order - b.order;
  const pick = (found: typeof scored): string[] =>
    found
      .sort(byCloseness)
      .slice(0, MAX_SUGGESTIONS)
      .map((entry) => entry.name);

  const family = scored.filter((entry) => entry.name.startsWith(`${written}_`));
  if (family.length > 0) return pick(family);
  // Only the closest near misses: tp2_pip → tp2_pips, not also tp_pips.
  const near = scored.filter((entry) => entry.distance <= threshold);
  if (near.length > 0) {
    const closest = Math.min(...near.map((entry) => entry.distance));
    return pick(near.filter((entry) => entry.distance === closest));
  }
  const prefixed = scored.filter(
    (entry) =>
      (written.length >= 2 && entry.name.startsWith(written)) ||
      (entry.name.length >= 3 && written.startsWith(entry.name)),
  );
  if (prefixed.length > 0) return pick(prefixed);
  return pick(scored.filter((entry) => entry.name.endsWith(`_${written}`)));
}

/**
 * Optimal string alignment distance (insertions, deletions, substitutions and swaps of two
 * neighbours each cost 1), over three rolling rows.
 */
export function editDistance(a: string, b: string): number {
  let before = new Uint32Array(b.length + 1);
  let previous = new Uint32Array(b.length + 1).map((_, j) => j);
  let current = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i += 1) {
    current[0] = i;
    for (let j = 1; j <= b.length; j += 1) {
      const cost = a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1;
      let best = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (
        i > 1 &&
        j > 1 &&
        a.charCodeAt(i - 1) === b.charCodeAt(j - 2) &&
        a.charCodeAt(i - 2) === b.charCodeAt(j - 1)
      ) {
        best = Math.min(best, before[j - 2]! + 1);
      }
      current[j] = best;
    }
    [before, previous, current] = [previous, current, before];
  }
  return previous[b.length]!;
}
