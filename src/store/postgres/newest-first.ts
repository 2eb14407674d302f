import type pg from 'pg';
import type { PageRequest } from '../store.js';
import { rowsForPage } from '../record-page.js';

/**
 * The rows of `table` newest first (created_at, then id), of one account or all, for a page
 * (one row more than asked: it says whether a next page is), `columns` of each (all unless
 * given). Served by the `*_listing` indexes.
 */
export async function newestFirst<Row extends pg.QueryResultRow>(
  pool: pg.Pool,
  table: 'accounts' | 'sources' | 'agents',
  page: PageRequest & { accountId?: string },
  columns = '*',
): Promise<Row[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  if (page.accountId !== undefined) {
    params.push(page.accountId);
    where.push(`account_id = $${params.length}`);
  }
  if (page.before !== undefined) {
    // An unknown cursor compares as NULL, so it answers nothing rather than the first page.
    params.push(page.before);
    where.push(`(created_at, id) < (SELECT created_at, id FROM ${table} WHERE id = $${params.length})`);
  }
  params.push(rowsForPage(page));
  const { rows } = await pool.query<Row>(
    `SELECT ${columns} FROM ${table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
    params,
  );
  return rows;
}
