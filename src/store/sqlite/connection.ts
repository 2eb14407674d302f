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

  constructor(path: string, busyTimeoutMs: number) {
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
