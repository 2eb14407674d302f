/** Monthly quota periods are calendar months in UTC. */

export function periodOf(timeMillis: number): string {
  const d = new Date(timeMillis);
  return `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`;
}

/** The instant the period after `period` starts: when the quota resets. */
export function periodEnd(period: string): Date {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(year, month, 1));
}

/** Whole seconds from `timeMillis` until the period resets, at least 1. */
export function secondsUntilReset(period: string, timeMillis: number): number {
  return Math.max(1, Math.ceil((periodEnd(period).getTime() - timeMillis) / 1000));
}
