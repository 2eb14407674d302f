import type { SqliteConnection } from './connection.js';

/**
 * After a failed WAL sync: what was committed may be in memory only (the kernel may drop pages
 * a failed write-back could not write, and a later sync would not see them as dirty). A full
 * checkpoint copies every committed page into the database file and syncs it (the connection
 * runs under FULL), then empties the log; only when all of that succeeded is the store's state
 * on disk again. Throws otherwise (the disk still full, a reader in the way).
 */
export function checkpointDurably(connection: SqliteConnection): void {
  const [result] = connection.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{
    busy: number;
    log: number;
    checkpointed: number;
  }>;
  if (result === undefined || result.busy !== 0) throw new Error('the checkpoint could not complete');
}
