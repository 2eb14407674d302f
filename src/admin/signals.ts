import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import { DELIVERY_STATUSES, SIGNAL_STATUSES, type DeliveryStatus, type SignalStatus } from '../store/records.js';
import { logEntryJson } from '../store/log-entry.js';
import { jsonPageBody } from './json-page-body.js';
import type { SignalFilter, Store } from '../store/store.js';
import { type AdminResult, notFound, refuse } from './admin-result.js';
import { type JsonSchema, objectSchema } from '../openapi/index.js';

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
type Parameter = 'sourceId' | 'status' | 'outcome' | 'symbol' | 'limit' | 'before';
/** A symbol as the signal language accepts one, once upper-cased. */
const SYMBOL_FORM = /^[A-Z0-9._\-/#+!$@&^:]{1,32}$/;

/** The query of `GET /api/admin/signals`, as published; its names are the ones taken. */
const QUERY_FIELDS: Record<Parameter, JsonSchema> = {
  sourceId: { type: 'string', minLength: 1, description: "only this source's signals", examples: ['src_0123'] },
  status: {
    type: 'string',
    enum: SIGNAL_STATUSES,
    description: 'only signals accepted, rejected, or taken as duplicates at intake',
  },
  outcome: {
    type: 'string',
    enum: DELIVERY_STATUSES,
    description: 'only signals with at least one delivery in this status',
  },
  symbol: {
    type: 'string',
    minLength: 1,
    maxLength: 32,
    description: 'only signals for this symbol (case-insensitive)',
    examples: ['EURUSD'],
  },
  limit: { type: 'integer', minimum: 1, maximum: MAX_PAGE, default: DEFAULT_PAGE, description: 'signals per page' },
  before: {
    type: 'string',
    minLength: 1,
    description: "the previous page's next: the page of signals older than it",
    examples: ['sig_0123'],
  },
};
export const SIGNAL_QUERY = objectSchema(QUERY_FIELDS);
const PARAMETERS = Object.keys(SIGNAL_QUERY.properties);

/** The query of `GET /api/admin/signals` as parsed: a repeated parameter arrives as a list. */
export type SignalQuery = Readonly<Record<string, unknown>>;

/**
 * A page of the signal log, newest first; `next` is the `before` cursor of the following page.
 * Every parameter is checked: an unknown or repeated one, an empty value, or a source or cursor
 * that names nothing is refused rather than answered with a page that looks like "no signals".
 */
export async function listSignals(store: Store, query: SignalQuery) {
  const filter = await signalFilterOf(store, query);
  if (!filter.ok) return filter;
  const page = await store.signals.list(filter.value);
  return { ok: true as const, value: { signals: page.signals, next: page.next } };
}

/**
 * The same page as JSON: what `JSON.stringify` writes of `listSignals`' value, byte for byte,
 * made from the log's entries without parsing their stored JSON (the admin API's answer); a
 * long page comes as its UTF-8 bytes (`jsonPageBody`).
 */
export async function signalPageJson(store: Store, query: SignalQuery): Promise<AdminResult<string | Buffer>> {
  const filter = await signalFilterOf(store, query);
  if (!filter.ok) return filter;
  const page = await store.signals.listLogEntries(filter.value);
  return {
    ok: true,
    value: jsonPageBody('{"signals":[', page.entries.map(logEntryJson), `],"next":${JSON.stringify(page.next)}}`),
  };
}

/** The filter a query asks for, every parameter checked. */
async function signalFilterOf(store: Store, query: SignalQuery): Promise<AdminResult<SignalFilter>> {
  const given = readParameters(query);
  if (!given.ok) return given;
  const values = given.value;
  const problems: Problem[] = [];
  const filter: SignalFilter = { limit: DEFAULT_PAGE };
  if (values.limit !== undefined) {
    const limit = Number(values.limit);
    if (!/^\d+$/.test(values.limit) || limit < 1 || limit > MAX_PAGE) {
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: 'limit',
        detail: `limit must be a whole number from 1 to ${MAX_PAGE}`,
      });
    }
    filter.limit = limit;
  }
  if (values.status !== undefined) {
    if (!SIGNAL_STATUSES.includes(values.status as SignalStatus)) {
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: 'status',
        detail: `status must be one of ${SIGNAL_STATUSES.join(', ')}`,
      });
    }
    filter.status = values.status as SignalStatus;
  }
  if (values.outcome !== undefined) {
    if (!DELIVERY_STATUSES.includes(values.outcome as DeliveryStatus)) {
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: 'outcome',
        detail: `outcome must be one of ${DELIVERY_STATUSES.join(', ')} (signals with at least one delivery in that status)`,
      });
    }
    filter.outcome = values.outcome as DeliveryStatus;
  }
  if (values.symbol !== undefined) {
    // Signals store the symbol upper-cased (ASCII letters only: a symbol holds no others).
    const symbol = values.symbol.replace(/[a-z]/g, (letter) => letter.toUpperCase());
    if (!SYMBOL_FORM.test(symbol)) {
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: 'symbol',
        detail:
          'symbol must be a symbol as signals name it: up to 32 letters A-Z, digits and ._-/#+!$@&^:, like EURUSD',
      });
    }
    filter.symbol = symbol;
  }
  if (values.sourceId === '') {
    problems.push({
      code: ErrorCode.INVALID_REQUEST,
      param: 'sourceId',
      detail: "sourceId must name a source; leave it out for every source's signals",
    });
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
    if ((await store.sources.get(values.sourceId)) === null) {
      problems.push({ code: ErrorCode.NOT_FOUND, param: 'sourceId', detail: `no source with id '${values.sourceId}'` });
    }
    filter.sourceId = values.sourceId;
  }
  if (values.before !== undefined) {
    if ((await store.signals.get(values.before)) === null) {
      problems.push({
        code: ErrorCode.NOT_FOUND,
        param: 'before',
        detail: `no signal with id '${values.before}' to page back from; pass as before the next of the previous page, or leave it out for the newest signals`,
      });
    }
    filter.before = values.before;
  }
  if (problems.length > 0) return refuse<never>(...problems);
  return { ok: true, value: filter };
}

/** The parameters given, each once; every unknown or repeated one is a problem. */
function readParameters(query: SignalQuery): AdminResult<Partial<Record<Parameter, string>>> {
  const problems: Problem[] = [];
  const values: Partial<Record<Parameter, string>> = {};
  for (const [name, value] of Object.entries(query)) {
    if (value === undefined) continue; // not given (the CLI's options left out)
    if (!PARAMETERS.includes(name)) {
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
  const signal = await store.signals.get(id);
  return signal === null ? notFound('signal', id) : { ok: true, value: signal };
}
