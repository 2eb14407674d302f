import { existsSync } from 'node:fs';
import path from 'node:path';
import type { OpenStoreOptions } from './open-store.js';

/**
 * Whether the configured store already exists (SQLite: `<dataDir>/signalgate.db`; PostgreSQL:
 * signalgate's tables in the database or schema), found without creating or migrating anything.
 */
export async function storePresent(options: OpenStoreOptions): Promise<boolean> {
  if (!options.databaseUrl) return existsSync(path.join(options.dataDir, 'signalgate.db'));
  const { postgresStorePresent } = await import('./postgres/postgres-store-present.js');
  return postgresStorePresent(options.databaseUrl, options.schema ?? null);
}
