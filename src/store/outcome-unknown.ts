/**
 * A request whose writes may have been committed, but which cannot be answered as stored: the
 * disk sync after its commit failed, the thread that committed it died before answering, or the
 * PostgreSQL connection was lost while the call that commits it was under way.
 * An error answer would say it never happened (a signal answered with an error is
 * never executed), which may be false, so the HTTP edge answers nothing and closes the
 * connection, as a crash would; the sender retries with its `Idempotency-Key`.
 */
export class OutcomeUnknownError extends Error {
  constructor(cause: unknown) {
    super(
      `the request may have been stored, but cannot be answered: ${cause instanceof Error ? cause.message : String(cause)}`,
      {
        cause,
      },
    );
    this.name = 'OutcomeUnknownError';
  }
}
