/** A page request of a list, in the signal log's paging style. */
export interface PageRequest {
  limit: number;
  /** Only records older (createdAt, then id) than the record with this id. */
  before?: string;
}

/** One page of a list, newest first. */
export interface RecordPage<T> {
  items: T[];
  /** The id to pass as `before` for the following page; null when there is none. */
  next: string | null;
}

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
