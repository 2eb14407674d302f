import type { PageRequest, RecordPage } from './store.js';

/** How many rows a store reads for a page: one more than asked, which says whether a next page is. */
export function rowsForPage(page: PageRequest): number {
  return Math.max(0, Math.floor(page.limit)) + 1;
}

/** The page out of the `rowsForPage(page)` newest matching records. */
export function recordPage<T extends { id: string }>(page: PageRequest, read: T[]): RecordPage<T> {
  const size = Math.max(0, Math.floor(page.limit));
  const items = read.slice(0, size);
  return { items, next: read.length > size && size > 0 ? items[size - 1]!.id : null };
}
