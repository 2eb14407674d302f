/** Removing what is older than the operator keeps. */
export interface Retention {
  /**
   * Deletes at most `limit` signal records received before `before`, oldest first, with their
   * deliveries; a signal with a delivery not yet final (queued or delivered), or named by an
   * idempotency key, is kept. Answers how many were deleted. Usage counts are kept apart and
   * are not touched.
   */
  pruneSignals(before: string, limit: number): Promise<number>;
  /** Deletes at most `limit` idempotency keys created before `before`; answers how many. */
  pruneIdempotencyKeys(before: string, limit: number): Promise<number>;
}
