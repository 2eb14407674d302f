import type Database from 'better-sqlite3';

/** Large enough to lift glibc's trim threshold far above what one ingest allocates and frees. */
const GUARD_BYTES = 8 * 1024 * 1024;

/**
 * glibc's thresholds are the process's and only ever rise, so once is enough: each later
 * connection paid the allocation again, all its page faults, for nothing. Once per thread, as a
 * thread's modules are its own: a process that opens many stores (a test worker) pays once.
 */
let lifted = false;

/**
 * glibc hands free memory at the top of its heap back to the OS once more than its trim
 * threshold (128 KiB until it adapts) is free there. SQLite's statement journal frees and
 * allocates about that much on every inbound insert, so each one paid some 40 page faults:
 * measured 110 µs per ingest against 42 µs without the churn. Freeing one block larger than
 * the mmap threshold makes glibc raise both thresholds for the life of the process
 * (mallopt(3), "dynamic mmap threshold"), which ends the churn. One SQLite allocation does
 * that here; with another C library it is a harmless 8 MiB allocation, freed at once.
 * `substr` makes SQLite expand the zero blob into a real allocation; `randomblob` made the same
 * one but filled it with random bytes, a cost paid on every connection opened (decision
 * 0049-test-time-shared-workers).
 */
export function liftMallocTrimThreshold(db: Database.Database): void {
  if (lifted) return;
  db.prepare('SELECT length(substr(zeroblob(?), 1, 1)) AS bytes').get(GUARD_BYTES);
  lifted = true;
}
