import type pg from 'pg';

/** SQLSTATEs after which PostgreSQL has rolled the transaction back and a retry is safe. */
const RETRYABLE = new Set(['40001', '40P01']);
/** Attempts at a transaction that keeps failing with a retryable SQLSTATE. */
const MAX_ATTEMPTS = 3;

/** Whether `error` is a deadlock or serialization failure: rolled back, so nothing of it happened. */
function isRetryable(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && RETRYABLE.has(code);
}

/**
 * Runs `work` (one statement, or one call that PostgreSQL runs as one transaction) again while it
 * fails with a deadlock or serialization failure, which rolled it back whole, up to MAX_ATTEMPTS
 * in all; any other error is thrown to the caller.
 */
export async function againIfRolledBack<T>(work: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (isRetryable(error) && attempt < MAX_ATTEMPTS) continue;
      throw error;
    }
  }
}

/**
 * Runs `work` in one transaction on one pooled connection. Deadlock and serialization
 * failures (rolled back by PostgreSQL, so nothing happened) are retried; any other error,
 * including a failed COMMIT whose fate is unknown, is thrown to the caller.
 */
export async function inTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const client = await pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      try {
        const result = await work(client);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
        });
        throw error;
      }
    } catch (error) {
      if (isRetryable(error) && attempt < MAX_ATTEMPTS && !broken) continue;
      throw error;
    } finally {
      client.release(broken);
    }
  }
}
