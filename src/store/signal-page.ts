import type { SignalRecord } from './records.js';
import type { SignalFilter, SignalPage } from './store.js';

/**
 * How many rows a store reads for `filter`: one more than the page, since whether that row is
 * there says whether a next page is.
 */
export function rowsToRead(filter: SignalFilter): number {
  return pageSize(filter) + 1;
}

/** The page out of the `rowsToRead(filter)` newest matching signals. */
export function signalPage(filter: SignalFilter, read: SignalRecord[]): SignalPage {
  const size = pageSize(filter);
  const signals = read.slice(0, size);
  return { signals, next: read.length > size && size > 0 ? signals[size - 1]!.id : null };
}

function pageSize(filter: SignalFilter): number {
  return Math.max(0, Math.floor(filter.limit));
}
