/**
 * Splits `total` whole percents over `count` take-profit levels as evenly as whole percents
 * allow, the remainder going one point each to the last levels:
 * 100 over 3 → 33, 33, 34; 100 over 6 → 16, 16, 17, 17, 17, 17.
 */
export function splitShares(total: number, count: number): number[] {
  if (!Number.isInteger(total) || !Number.isInteger(count) || count < 1 || total < count) {
    throw new RangeError(`cannot split ${total}% over ${count} levels in whole percents of at least 1`);
  }
  const base = Math.floor(total / count);
  const remainder = total - base * count;
  const shares: number[] = [];
  for (let index = 0; index < count; index += 1) shares.push(index >= count - remainder ? base + 1 : base);
  return shares;
}
