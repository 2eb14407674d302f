/**
 * A time in the one form the store keeps: ISO 8601 UTC with milliseconds. The SQLite store
 * compares times as text, which is only time order when every value has this exact shape.
 * Throws on a value that is not a time, rather than storing something that sorts wrongly.
 */
export function isoTime(value: string | Date): string {
  const date = typeof value === 'string' ? new Date(value) : value;
  if (Number.isNaN(date.getTime())) throw new RangeError(`not a time: ${String(value)}`);
  return date.toISOString();
}

export function isoTimeOrNull(value: string | Date | null | undefined): string | null {
  return value === null || value === undefined ? null : isoTime(value);
}
