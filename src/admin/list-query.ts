import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import { type AdminResult, refuse } from './admin-result.js';

/** Lists answer this many records unless `limit` says otherwise, and never more than MAX_LIST_PAGE. */
export const DEFAULT_LIST_PAGE = 50;
export const MAX_LIST_PAGE = 500;

/** A list's query as parsed: a repeated parameter arrives as a list. */
export type ListQuery = Readonly<Record<string, unknown>>;

/**
 * Reads a list's query parameters (`limit`, `before`, and the list's own filters), each given
 * once and not empty; an unknown, repeated or empty one is refused, not ignored, so a typo
 * never answers a page that looks like "nothing there".
 */
export function readListQuery<Name extends string>(
  query: ListQuery,
  filters: readonly Name[],
): AdminResult<{ limit: number; before?: string } & Partial<Record<Name, string>>> {
  const known = ['limit', 'before', ...filters];
  const problems: Problem[] = [];
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue; // not given (the CLI's options left out)
    if (!known.includes(name)) {
      problems.push(...unknownNames([name], known, 'query parameter'));
    } else if (typeof value !== 'string') {
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: name,
        detail: `query parameter '${name}' is given ${Array.isArray(value) ? `${value.length} times` : 'in a form that is not one value'}; give it once`,
      });
    } else if (value === '') {
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: name,
        detail:
          name === 'before'
            ? 'before must be the next of the previous page; leave it out for the first page'
            : `${name} must not be empty; leave it out for no filter`,
      });
    } else {
      values[name] = value;
    }
  }
  let limit = DEFAULT_LIST_PAGE;
  if (values.limit !== undefined) {
    limit = Number(values.limit);
    if (!/^\d+$/.test(values.limit) || limit < 1 || limit > MAX_LIST_PAGE) {
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: 'limit',
        detail: `limit must be a whole number from 1 to ${MAX_LIST_PAGE}`,
      });
    }
  }
  if (problems.length > 0) return refuse(...problems);
  const { limit: _limit, ...rest } = values;
  return { ok: true, value: { ...(rest as Partial<Record<Name, string>> & { before?: string }), limit } };
}

/** The refusal for a `before` cursor that names no record of the list. */
export function unknownCursor(what: string, id: string): Problem {
  return {
    code: ErrorCode.NOT_FOUND,
    param: 'before',
    detail: `no ${what} with id '${id}' to page back from; pass as before the next of the previous page, or leave it out for the first page`,
  };
}
