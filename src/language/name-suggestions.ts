/**
 * "Did you mean …?" for unknown parameter names and actions: the family of a stem (`entry` →
 * entry_pips, entry_price, entry_percent); else the closest near misses by edit distance
 * (`sl_pip` → sl_pips); else prefix matches either way (`volume` → vol).
 */

export const MAX_SUGGESTIONS = 4;

export function suggestNames(written: string, candidates: readonly string[]): string[] {
  if (written === '') return [];
  const threshold = written.length <= 3 ? 1 : written.length <= 7 ? 2 : 3;
  const scored = candidates.filter((name) => name !== written).map((name, order) => ({ name, order, distance: editDistance(written, name) }));
  const byCloseness = (a: { distance: number; order: number }, b: { distance: number; order: number }): number =>
    a.distance - b.distance || a.order - b.order;
  const pick = (found: typeof scored): string[] => found.sort(byCloseness).slice(0, MAX_SUGGESTIONS).map((entry) => entry.name);

  const family = scored.filter((entry) => entry.name.startsWith(`${written}_`));
  if (family.length > 0) return pick(family);
  // Only the closest near misses: tp2_pip → tp2_pips, not also tp_pips.
  const near = scored.filter((entry) => entry.distance <= threshold);
  if (near.length > 0) {
    const closest = Math.min(...near.map((entry) => entry.distance));
    return pick(near.filter((entry) => entry.distance === closest));
  }
  return pick(
    scored.filter(
      (entry) => (written.length >= 2 && entry.name.startsWith(written)) || (entry.name.length >= 3 && written.startsWith(entry.name)),
    ),
  );
}

/**
 * Optimal string alignment distance (insertions, deletions, substitutions and swaps of two
 * neighbours each cost 1). Names are short; the unknown one is cut to bound the work.
 */
export function editDistance(a: string, b: string): number {
  const left = a.slice(0, 64);
  const right = b.slice(0, 64);
  const rows: number[][] = [];
  for (let i = 0; i <= left.length; i += 1) {
    const row: number[] = [i];
    for (let j = 1; j <= right.length; j += 1) {
      if (i === 0) {
        row.push(j);
        continue;
      }
      const cost = left[i - 1] === right[j - 1] ? 0 : 1;
      let best = Math.min(rows[i - 1]![j]! + 1, row[j - 1]! + 1, rows[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && left[i - 1] === right[j - 2] && left[i - 2] === right[j - 1]) {
        best = Math.min(best, rows[i - 2]![j - 2]! + 1);
      }
      row.push(best);
    }
    rows.push(row);
  }
  return rows[left.length]![right.length]! + Math.abs(a.length - left.length) + Math.abs(b.length - right.length);
}
