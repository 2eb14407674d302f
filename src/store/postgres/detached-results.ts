import type pg from 'pg';

/**
 * Makes the pool's `query` (its promise form, the one the store uses) answer a copy of `pg`'s
 * result and leave `pg`'s own result with no rows. Why: with `query_timeout` set, as the store's
 * pools have it (`unanswering-server.ts`), `pg` wraps each query's callback in a closure that
 * keeps the query, and with it every row it read, alive through V8's young-generation
 * collections until the next full one, long after the answer was used. Every scavenge then
 * copies the rows of the last few hundred queries again and promotes them: listing pages of a
 * 10 M-signal log, about 0.8 MB promoted per scavenge, scavenges of several milliseconds and a
 * full collection every 15–20 of them, against about 45 KB per scavenge once `pg`'s result no
 * longer holds the rows (docs/decisions/0011-postgresql-detached-results.md).
 * The caller gets the same row objects; only `pg`'s reference to them is dropped.
 *
 * Statements on a checked-out pool client (`inTransaction`, the ingest call) still go through
 * `pg`'s wrapper undetached, on purpose: none answers many rows. The transactions answer a row or
 * an account's sources; the ingest call one row of at most 50 short answers (a replay's carries
 * its signal). What answers many rows runs elsewhere: the log's pages, poll hand-outs and expiry
 * on the pool (detached here), session hand-outs on `SessionLocks`' own connection, which has no
 * `query_timeout` and so no wrapper.
 */
export function detachResults(pool: pg.Pool): void {
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as { query: unknown }).query = (...args: unknown[]) => {
    const first = args[0] as { submit?: unknown } | undefined;
    // The callback and submittable forms answer no promise: left as they are.
    if (typeof args.at(-1) === 'function' || typeof first?.submit === 'function') return query(...args);
    return (query(...args) as Promise<pg.QueryResult>).then((result) => {
      const detached: pg.QueryResult = { ...result };
      result.rows = [];
      return detached;
    });
  };
}
