import path from 'node:path';
import { type Config, ConfigError, loadConfig } from '../../config/config.js';
import { storeStartupError, withoutPassword } from '../../service/startup-error.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/store.js';
import { storePresent } from '../../store/store-present.js';

export interface WithStoreOptions {
  /** Start a new, empty store when the data directory or database holds none (`--create`). */
  create?: boolean;
}

/**
 * Opens the configured store for one command, runs `use` on it and closes it. The store is
 * picked from the working directory and the environment, so the command says on stderr which
 * one it opened, and refuses to start a new, empty store unless asked: run from the wrong
 * directory, or pointed at the wrong database or schema, it would otherwise answer from an
 * empty store as if it were the server's. The check only reads; nothing is created first.
 * A store that cannot be opened is said in the sentence `serve` would stop with, naming the
 * setting, not a driver's stack trace (exit 1).
 */
export async function withStore(
  use: (store: Store, config: Config) => Promise<void>,
  options: WithStoreOptions = {},
): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`signalgate: ${error.message}\n`);
    process.exitCode = 1;
    return;
  }
  let store: Store;
  try {
    const where = { dataDir: config.dataDir, databaseUrl: config.databaseUrl };
    if (!options.create && !(await storePresent(where))) {
      process.stderr.write(`signalgate: ${noStore(config)}\n`);
      process.exitCode = 1;
      return;
    }
    store = await openStore(where);
  } catch (error) {
    process.stderr.write(`signalgate: ${storeStartupError(config, error).message}\n`);
    process.exitCode = 1;
    return;
  }
  process.stderr.write(`signalgate: ${storeName(config)}\n`);
  try {
    await use(store, config);
  } finally {
    await store.close();
  }
}

/** The store a command opened, as its stderr line says it. */
function storeName(config: Config): string {
  return config.databaseUrl === null
    ? `store: SQLite ${path.join(config.dataDir, 'signalgate.db')}`
    : `store: PostgreSQL ${withoutPassword(config.databaseUrl)}`;
}

/** Why a command refused to start a new, empty store, and how to point it at the server's. */
function noStore(config: Config): string {
  if (config.databaseUrl === null) {
    return (
      `no store in SIGNALGATE_DATA_DIR=${config.dataDir} (it has no signalgate.db): run this where the server runs, ` +
      `or set SIGNALGATE_DATA_DIR to the server's data directory (SIGNALGATE_DATABASE_URL for a server on PostgreSQL); ` +
      `add --create to start a new, empty store there`
    );
  }
  return (
    `no store in the PostgreSQL database at SIGNALGATE_DATABASE_URL=${withoutPassword(config.databaseUrl)} (it has no signalgate tables ` +
    `in that database and schema): set SIGNALGATE_DATABASE_URL to the server's database (with its search_path, if the server uses a schema); ` +
    `add --create to start a new, empty store there`
  );
}
