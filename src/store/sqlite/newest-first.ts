import type { PageRequest } from '../store.js';
import { rowsForPage } from '../record-page.js';
import type { SqliteConnection } from './connection.js';

/**
 * The rows of `table` newest first (created_at, then id), of one account or all, for a page
 * (one row more than asked: it says whether a next page is). Served by the `*_listing` indexes.
 */
export function newestFirst<Row>(
  connection: SqliteConnection,
  table: 'accounts' | 'sources' | 'agents',
  page: PageRequest & { accountId?: string },
): Row[] {
  const where: string[] = [];
  const params: unknown[] = [];
  if (page.accountId !== undefined) {
    where.push('account_id = ?');
    params.push(page.accountId);
  }
  if (page.before !== undefined) {
    // An unknown cursor compares as NULL, so it answers nothing rather than the first page.
    where.push(`(created_at, id) < (SELECT created_at, id FROM ${table} WHERE id = ?)`);
    params.push(page.before);
  }
  params.push(rowsForPage(page));
  return (
    connection
      // LIMIT CAST(? AS INTEGER), not `LIMIT ?`: see the hand-out in deliveries.ts.
      .stmt(
        `SELECT * FROM ${table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT CAST(? AS INTEGER)`,
      )
      .all(...params) as Row[]
  );
}
