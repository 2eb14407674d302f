import { ErrorCode, type Problem } from '../errors/catalog.js';

/** Where the original request's signal id goes in the detail (the PostgreSQL ingest function fills it in too). */
const ORIGINAL_SIGNAL_MARK = '{signal}';

/** The detail recorded for a request refused with IDEMPOTENCY_KEY_REUSED, before the original's id is filled in. */
export const KEY_REUSED_DETAIL = `this Idempotency-Key was used within the last 24 hours for a different request (signal ${ORIGINAL_SIGNAL_MARK}); use a new key for a new signal`;

/** The problem a request gets when its Idempotency-Key is held by a different request, `originalId`. */
export function keyReusedProblem(originalId: string): Problem {
  return {
    code: ErrorCode.IDEMPOTENCY_KEY_REUSED,
    param: 'Idempotency-Key',
    detail: KEY_REUSED_DETAIL.replace(ORIGINAL_SIGNAL_MARK, () => originalId),
  };
}
