import type Database from 'better-sqlite3';
import { readMigrationFiles } from '../migration-files.js';

/**
 * Applies the SQLite migrations not yet recorded in `schema_migrations`. IMMEDIATE takes the
 * write lock first, so two processes starting at once apply each file once.
 */
export function migrateSqlite(db: Database.Database): void {
  const files = readMigrationFiles('sqlite');
  db.transaction(() => {
    db.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT',
    );
    const applied = new Set(
      (db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map((row) => row.version),
    );
    for (const file of files) {
      if (applied.has(file.version)) continue;
      db.exec(file.sql);
      db.prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(
        file.version,
        file.name,
        new Date().toISOString(),
      );
    }
  }).immediate();
}
