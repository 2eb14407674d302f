import { ErrorCode, type Problem } from '../errors/catalog.js';

/** What a request reaching a draining server is told, by the router and the inbound handler alike. */
export const SHUTTING_DOWN: Problem = Object.freeze({
  code: ErrorCode.SHUTTING_DOWN,
  detail: 'the server is shutting down and recorded nothing; send the request again in a moment',
});

/** What a request that failed inside the server is told: nothing it asked for was acknowledged. */
export const REQUEST_FAILED: Problem = Object.freeze({
  code: ErrorCode.INTERNAL_ERROR,
  detail: 'the server failed to handle this request; nothing was acknowledged, so it is safe to retry',
});

/**
 * What a request is told when the store could not be reached or had no room: nothing was
 * recorded. Sent with `Retry-After: STORE_RETRY_AFTER_SECONDS`.
 */
export const STORE_UNAVAILABLE: Problem = Object.freeze({
  code: ErrorCode.STORE_UNAVAILABLE,
  detail:
    'the store is unavailable (database unreachable or disk full) and recorded nothing; send the request again in a few seconds',
});

/** Seconds a caller is asked to wait before retrying after `STORE_UNAVAILABLE`. */
export const STORE_RETRY_AFTER_SECONDS = 5;
