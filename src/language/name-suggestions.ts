/**
 * "Did you mean …?" for unknown parameter names and actions: family matches first (`sl` →
 * sl_pips, sl_price, sl_percent), then near misses by edit distance (`sl_pip` → sl_pips), then
 * prefix matches either way (`volume` → vol).
 */

export const MAX_SUGGESTIONS = 4;

export function suggestNames(written: string, candidates: readonly string[]): string[] {
  if (written === '') return [];
  const threshold = written.length <= 3 ? 1 : written.length <= 7 ? 2 : 3;
  const ranked: { name: string; group: number; distance: number; order: number }[] = [];
  candidates.forEach((name, order) => {
    if (name === written) return;
    const distance = editDistance(written, name);
    let group: number;
    if (name.startsWith(`${written}_`)) group = 0;
    else if (distance <= threshold) group = 1;
    else if ((written.length >= 2 && name.startsWith(written)) || (name.length >= 3 && written.startsWith(name))) group = 2;
    else return;
    ranked.push({ name, group, distance, order });
  });
  ranked.sort((a, b) => a.group - b.group || a.distance - b.distance || a.order - b.order);
  return ranked.slice(0, MAX_SUGGESTIONS).map((entry) => entry.name);
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
