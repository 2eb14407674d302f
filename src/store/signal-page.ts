import type { SignalFilter } from './store.js';

/**
 * How many rows a store reads for `filter`: one more than the page, since whether that row is
 * there says whether a next page is.
 */
export function rowsToRead(filter: SignalFilter): number {
  return pageSize(filter) + 1;
}

/** The page out of the `rowsToRead(filter)` newest matching entries. */
export function signalPage<T extends { id: string }>(
  filter: SignalFilter,
  read: T[],
): { entries: T[]; next: string | null } {
  const size = pageSize(filter);
  const entries = read.slice(0, size);
  return { entries, next: read.length > size && size > 0 ? entries[size - 1]!.id : null };
}

function pageSize(filter: SignalFilter): number {
  return Math.max(0, Math.floor(filter.limit));
}
