/**
 * What one item of a group-commit batch came to: its value, or the error it failed with alone
 * (its savepoint rolled back, or the database refused it), the rest of the batch unaffected.
 */
export type ItemResult<O> = { ok: true; value: O } | { ok: false; error: unknown };
