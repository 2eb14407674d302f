/** Monthly quota periods are calendar months in UTC. */

// The last period asked for and the instants it spans: every request asks, and a month is long.
let periodFrom = 0;
let periodUntil = -1;
let lastPeriod = '';

export function periodOf(timeMillis: number): string {
  if (timeMillis >= periodFrom && timeMillis < periodUntil) return lastPeriod;
  const d = new Date(timeMillis);
  const year = d.getUTCFullYear();
  const month = d.getUTCMonth();
  const period = `${year}-${String(month + 1).padStart(2, '0')}`;
  // Date.UTC reads years 0-99 as 1900-1999; such a time is only ever computed, not cached.
  if (year >= 100) {
    periodFrom = Date.UTC(year, month, 1);
    periodUntil = Date.UTC(year, month + 1, 1);
    lastPeriod = period;
  }
  return period;
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
