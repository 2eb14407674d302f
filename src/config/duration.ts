const UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/**
 * A duration setting such as `90d`, `12h`, `30m` or `45s` (a whole number and one unit), in
 * milliseconds; null when it is not one.
 */
export function parseDuration(value: string): number | null {
  const match = /^(\d+)([smhd])$/.exec(value.trim());
  if (!match) return null;
  const ms = Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
  return ms > 0 && Number.isSafeInteger(ms) ? ms : null;
}
