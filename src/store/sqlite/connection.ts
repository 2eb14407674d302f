import Database from 'better-sqlite3';
import { liftMallocTrimThreshold } from './malloc-trim-guard.js';
import { WalSync } from './wal-sync.js';

/**
 * One better-sqlite3 connection to `signalgate.db`, with its prepared statements: every
 * concept's SQL runs through `stmt`, which prepares each text once per connection.
 */
export class SqliteConnection {
  readonly db: Database.Database;
  /** Null when the file is not in WAL mode; ingests then commit under FULL like the rest. */
  readonly walSync: WalSync | null;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    path: string,
    /** How long a write waits for the write lock held by another connection. */
    readonly busyTimeoutMs: number,
  ) {
    this.db = new Database(path, { timeout: busyTimeoutMs });
    // WAL lets readers (the CLI, the admin API) run beside the writer; FULL syncs the WAL on
    // every commit so an answered 202 survives a power cut, not only a process crash. Ingest
    // batches alone commit under NORMAL and get the same sync from `walSync` before answering.
    const journalMode = this.db.pragma('journal_mode = WAL', { simple: true });
    this.db.pragma('synchronous = FULL');
    this.walSync = journalMode === 'wal' ? new WalSync(path) : null;
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    this.db.pragma('foreign_keys = ON');
    liftMallocTrimThreshold(this.db);
  }

  /**
   * Runs `write` without waiting for the write lock: held by another connection, the write
   * fails at once with SQLITE_BUSY (`isBusy`), for the caller to try again later rather than
   * sleep on this thread.
   */
  withoutWaiting<T>(write: () => T): T {
    this.stmt('PRAGMA busy_timeout = 0').get();
    try {
      return write();
    } finally {
      this.stmt(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(this.busyTimeoutMs))}`).get();
    }
  }

  /** A COMMIT that leaves the WAL over `pages` pages checkpoints it (0: none does). */
  checkpointAfterPages(pages: number): void {
    this.db.pragma(`wal_autocheckpoint = ${pages}`);
  }

  stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }

  close(): void {
    this.statements.clear();
    this.db.close();
    this.walSync?.close();
  }
}

/** The write lock was held by another connection (a write run `withoutWaiting`). */
export function isBusy(error: unknown): boolean {
  return (
    error instanceof Database.SqliteError && (error.code === 'SQLITE_BUSY' || error.code.startsWith('SQLITE_BUSY_'))
  );
}
