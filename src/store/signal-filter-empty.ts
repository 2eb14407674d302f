import type { SignalFilter } from './store.js';

/**
 * Whether no signal can match `filter`, whatever the log holds: a rejected signal has no
 * normalized symbol, and only accepted signals have deliveries. Such a filter is answered
 * without reading the log: the query would walk one filter's index to its end looking for
 * rows the other filter excludes (every rejected signal of millions, for `status=rejected`
 * with a symbol).
 */
export function signalFilterIsEmpty(filter: SignalFilter): boolean {
  if (filter.status === 'rejected' && filter.symbol !== undefined) return true;
  return filter.outcome !== undefined && filter.status !== undefined && filter.status !== 'accepted';
}
