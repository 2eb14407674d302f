/**
 * The store could not be reached or had no room, so the operation changed nothing: PostgreSQL
 * refused or dropped the connection, or did not give one in time; the disk under SQLite is
 * full. Unlike `OutcomeUnknownError`, nothing was committed, so callers are told to retry
 * (503 `STORE_UNAVAILABLE` with `Retry-After`) and service resumes by itself when the store is back.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

/** SQLite's answers when the disk (or the shared-memory file beside the WAL) has no room. */
const SQLITE_NO_ROOM = new Set(['SQLITE_FULL', 'SQLITE_IOERR_SHMSIZE']);
/** Socket errors of a connection to PostgreSQL that could not be made. */
const NOT_CONNECTED = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ECONNRESET',
  'EPIPE',
]);
/**
 * PostgreSQL's SQLSTATEs for a server that is going away, not up yet, out of connections or
 * out of disk (classes 08 and 53 and the operator interventions of 57P0x): the statement did not run.
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code.startsWith('53') || code === '57P01' || code === '57P02' || code === '57P03';
}
/** What `pg` and `pg-pool` say when there is no usable connection (they give no code). */
const NO_CONNECTION_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Client was closed and is not queryable',
  // A statement the server did not answer within its timeout. The ingest call never gets here
  // (its outcome is unknown: it may yet commit); for the others a retry is safe.
  'Query read timeout',
];

/**
 * Whether `error` says the store was unreachable or full, whichever backend raised it, so
 * that no code outside `src/store` needs to know the backends' error shapes.
 */
export function isStoreUnavailable(error: unknown): boolean {
  if (error instanceof StoreUnavailableError) return true;
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (SQLITE_NO_ROOM.has(code) || NOT_CONNECTED.has(code)) return true;
    if (/^[0-9A-Z]{5}$/.test(code) && isUnavailableSqlState(code)) return true;
  }
  if (NO_CONNECTION_MESSAGES.some((message) => error.message.startsWith(message))) return true;
  // A connection attempt that failed on several addresses (localhost: ::1 and 127.0.0.1).
  if (error instanceof AggregateError) return error.errors.some((inner) => isStoreUnavailable(inner));
  return false;
}
