import type { SignalStatus } from '../store/records.js';
import type { SignalFilter, Store } from '../store/store.js';
import { type AdminResult, notFound, refuse } from './admin-result.js';

export const DEFAULT_PAGE = 50;
export const MAX_PAGE = 500;
const STATUSES: readonly SignalStatus[] = ['queued', 'rejected'];

export interface SignalQuery {
  sourceId?: string | undefined;
  status?: string | undefined;
  limit?: string | undefined;
  before?: string | undefined;
}

/** A page of the signal log, newest first; `next` is the `before` cursor of the following page. */
export async function listSignals(store: Store, query: SignalQuery) {
  const filter: SignalFilter = { limit: DEFAULT_PAGE };
  if (query.limit !== undefined) {
    const limit = Number(query.limit);
    if (!/^\d+$/.test(query.limit) || limit < 1 || limit > MAX_PAGE) {
      return refuse<never>({ code: 'INVALID_REQUEST', param: 'limit', detail: `limit must be a whole number from 1 to ${MAX_PAGE}` });
    }
    filter.limit = limit;
  }
  if (query.status !== undefined) {
    if (!STATUSES.includes(query.status as SignalStatus)) {
      return refuse<never>({ code: 'INVALID_REQUEST', param: 'status', detail: `status must be one of ${STATUSES.join(', ')}` });
    }
    filter.status = query.status as SignalStatus;
  }
  if (query.sourceId !== undefined && query.sourceId !== '') filter.sourceId = query.sourceId;
  if (query.before !== undefined && query.before !== '') filter.before = query.before;
  const signals = await store.listSignals(filter);
  const last = signals[signals.length - 1];
  return { ok: true as const, value: { signals, next: signals.length === filter.limit && last ? last.id : null } };
}

export async function showSignal(store: Store, id: string): Promise<AdminResult<unknown>> {
  const signal = await store.getSignal(id);
  return signal === null ? notFound('signal', id) : { ok: true, value: signal };
}
