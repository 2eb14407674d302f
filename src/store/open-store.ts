import type { Store } from './store.js';
import { openPostgresStore } from './postgres/postgres-store.js';
import { openSqliteStore } from './sqlite/sqlite-store.js';

export interface OpenStoreOptions {
  /** Where the embedded SQLite file lives (`<dataDir>/signalgate.db`). */
  dataDir: string;
  /** `SIGNALGATE_DATABASE_URL`: when set, PostgreSQL is used instead of SQLite. */
  databaseUrl?: string | null;
  /** PostgreSQL only: keep the tables in this schema (tests isolate themselves this way). */
  schema?: string;
}

/** The store the configuration selects, migrated and ready. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  const store = options.databaseUrl
    ? openPostgresStore({ connectionString: options.databaseUrl, schema: options.schema ?? null })
    : openSqliteStore({ dataDir: options.dataDir });
  try {
    await store.migrate();
  } catch (error) {
    await store.close().catch(() => undefined);
    throw error;
  }
  return store;
}
