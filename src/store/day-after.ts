/** The UTC day after `day` (`YYYY-MM-DD`): a range of days ends before its first instant. */
export function dayAfter(day: string): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + 86_400_000).toISOString().slice(0, 10);
}
