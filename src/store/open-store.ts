import type { InboundThreadSetting } from './inbound-thread-choice.js';
import type { Store } from './store.js';
import type { StoreBackend } from './store-backend.js';

export interface OpenStoreOptions {
  /** Where the embedded SQLite file lives (`<dataDir>/signalgate.db`). */
  dataDir: string;
  /** `SIGNALGATE_DATABASE_URL`: when set, PostgreSQL is used instead of SQLite. */
  databaseUrl?: string | null;
  /** PostgreSQL only: keep the tables in this schema (tests isolate themselves this way). */
  schema?: string;
  /** SQLite only: where inbound requests are checked and committed (`SIGNALGATE_INBOUND_THREAD`). */
  inboundThread?: InboundThreadSetting;
}

/** The store the configuration selects, migrated and ready. */
export async function openStore(options: OpenStoreOptions): Promise<Store> {
  return (await openBackend(options)).store;
}

/** The backend the configuration selects: its store, migrated and ready, and what goes with it. */
export async function openBackend(options: OpenStoreOptions): Promise<StoreBackend> {
  // Only the selected store's driver is loaded: a command starts faster without the other.
  const backend = options.databaseUrl
    ? (await import('./postgres/postgres-backend.js')).postgresBackend({
        connectionString: options.databaseUrl,
        schema: options.schema ?? null,
      })
    : (await import('./sqlite/sqlite-backend.js')).sqliteBackend({
        dataDir: options.dataDir,
        inboundThread: options.inboundThread,
      });
  try {
    await backend.store.migrate();
  } catch (error) {
    await backend.store.close().catch(() => undefined);
    throw error;
  }
  return backend;
}

/**
 * The directory one server must hold alone while it serves this backend, or null. The embedded
 * store's server keeps its agents' push sessions in memory, so it needs its data directory to
 * itself; PostgreSQL instances share that through the database.
 */
export function serverDirectory(options: OpenStoreOptions): string | null {
  return options.databaseUrl ? null : options.dataDir;
}
