import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import { asciiUpperCase, symbolProblem } from '../language/index.js';
import type { SignalStatus } from '../store/records.js';
import type { SignalFilter, Store } from '../store/store.js';
import { type AdminResult, notFound, refuse } from './admin-result.js';

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
const STATUSES: readonly SignalStatus[] = ['queued', 'rejected'];
const PARAMETERS = ['sourceId', 'status', 'symbol', 'limit', 'before'] as const;
type Parameter = (typeof PARAMETERS)[number];

/** The query of `GET /api/admin/signals` as parsed: a repeated parameter arrives as a list. */
export type SignalQuery = Readonly<Record<string, unknown>>;

/**
 * A page of the signal log, newest first; `next` is the `before` cursor of the following page.
 * Every parameter is checked: an unknown or repeated one, an empty value, or a source or cursor
 * that names nothing is refused rather than answered with a page that looks like "no signals".
 */
export async function listSignals(store: Store, query: SignalQuery) {
  const given = readParameters(query);
  if (!given.ok) return given;
  const values = given.value;
  const problems: Problem[] = [];
  const filter: SignalFilter = { limit: DEFAULT_PAGE };
  if (values.limit !== undefined) {
    const limit = Number(values.limit);
    if (!/^\d+$/.test(values.limit) || limit < 1 || limit > MAX_PAGE) {
      problems.push({ code: ErrorCode.INVALID_REQUEST, param: 'limit', detail: `limit must be a whole number from 1 to ${MAX_PAGE}` });
    }
    filter.limit = limit;
  }
  if (values.status !== undefined) {
    if (!STATUSES.includes(values.status as SignalStatus)) {
      problems.push({ code: ErrorCode.INVALID_REQUEST, param: 'status', detail: `status must be one of ${STATUSES.join(', ')}` });
    }
    filter.status = values.status as SignalStatus;
  }
  if (values.symbol !== undefined) {
    const symbol = asciiUpperCase(values.symbol.trim());
    const problem = symbolProblem(symbol, 'text');
    if (problem !== undefined) problems.push({ code: ErrorCode.INVALID_REQUEST, param: 'symbol', detail: problem });
    filter.symbol = symbol;
  }
  if (values.sourceId === '') {
    problems.push({ code: ErrorCode.INVALID_REQUEST, param: 'sourceId', detail: "sourceId must name a source; leave it out for every source's signals" });
  }
  if (values.before === '') {
    problems.push({
      code: ErrorCode.INVALID_REQUEST,
      param: 'before',
      detail: 'before must be the next of the previous page; leave it out for the newest signals',
    });
  }
  if (problems.length > 0) return refuse<never>(...problems);

  if (values.sourceId !== undefined) {
    if ((await store.getSource(values.sourceId)) === null) {
      problems.push({ code: ErrorCode.NOT_FOUND, param: 'sourceId', detail: `no source with id '${values.sourceId}'` });
    }
    filter.sourceId = values.sourceId;
  }
  if (values.before !== undefined) {
    if ((await store.getSignal(values.before)) === null) {
      problems.push({
        code: ErrorCode.NOT_FOUND,
        param: 'before',
        detail: `no signal with id '${values.before}' to page back from; pass as before the next of the previous page, or leave it out for the newest signals`,
      });
    }
    filter.before = values.before;
  }
  if (problems.length > 0) return refuse<never>(...problems);

  const page = await store.listSignals(filter);
  return { ok: true as const, value: { signals: page.signals, next: page.next } };
}

/** The parameters given, each once; every unknown or repeated one is a problem. */
function readParameters(query: SignalQuery): AdminResult<Partial<Record<Parameter, string>>> {
  const problems: Problem[] = [];
  const values: Partial<Record<Parameter, string>> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue; // not given (the CLI's options left out)
    if (!(PARAMETERS as readonly string[]).includes(name)) {
      problems.push(...unknownNames([name], PARAMETERS, 'query parameter'));
    } else if (typeof value !== 'string') {
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: name,
        detail: `query parameter '${name}' is given ${Array.isArray(value) ? `${value.length} times` : 'in a form that is not one value'}; give it once`,
      });
    } else {
      values[name as Parameter] = value;
    }
  }
  return problems.length > 0 ? refuse(...problems) : { ok: true, value: values };
}

export async function showSignal(store: Store, id: string): Promise<AdminResult<unknown>> {
  const signal = await store.getSignal(id);
  return signal === null ? notFound('signal', id) : { ok: true, value: signal };
}
