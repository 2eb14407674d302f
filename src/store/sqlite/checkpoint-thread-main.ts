import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import type { CheckpointThreadData } from './checkpoint-thread.js';

/**
 * The checkpoint thread: a connection of its own that copies the WAL's committed pages into the
 * database file (a PASSIVE checkpoint: it never waits for, nor blocks, a reader or the writer)
 * on a timer. The connections that commit have SQLite's automatic checkpoint turned off, so no
 * request waits for this copy and its syncs. The copy syncs the WAL before it and the database
 * file after it (synchronous = FULL), as the automatic checkpoint did; the WAL is rewritten
 * from its start by the next commit after a checkpoint that copied everything.
 */
const port = parentPort!;
const { path, intervalMs, busyTimeoutMs } = workerData as CheckpointThreadData;
const db = new Database(path, { timeout: busyTimeoutMs });
db.pragma('synchronous = FULL');
db.pragma('wal_autocheckpoint = 0');

const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
const timer = setInterval(() => {
  try {
    checkpoint.run();
  } catch {
    // SQLITE_BUSY (another checkpoint, a backup's read) or a full disk: the next tick tries
    // again, and the WAL only grows meanwhile. A failed WAL sync of a commit is handled where
    // it happened (a durable checkpoint on that connection).
  }
}, intervalMs);

port.on('message', (message: 'close') => {
  if (message !== 'close') return;
  clearInterval(timer);
  db.close();
  port.close();
});
