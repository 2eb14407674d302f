import { existsSync } from 'node:fs';
import path from 'node:path';
import { type Config, ConfigError, loadConfig } from '../../config/config.js';
import { storeStartupError, withoutPassword } from '../../service/startup-error.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/store.js';

export interface WithStoreOptions {
  /** Start a new, empty SQLite store when the data directory holds none (`--create`). */
  create?: boolean;
}

/**
 * Opens the configured store for one command, runs `use` on it and closes it. The store is
 * picked from the working directory and the environment, so the command says on stderr which
 * one it opened, and refuses to start a new, empty SQLite store unless asked: run from the
 * wrong directory, it would otherwise answer from an empty store as if it were the server's.
 * A store that cannot be opened is said in the sentence `serve` would stop with, naming the
 * setting, not a driver's stack trace (exit 1).
 */
export async function withStore(use: (store: Store, config: Config) => Promise<void>, options: WithStoreOptions = {}): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`signalgate: ${error.message}\n`);
    process.exitCode = 1;
    return;
  }
  if (config.databaseUrl === null && !options.create && !existsSync(path.join(config.dataDir, 'signalgate.db'))) {
    process.stderr.write(
      `signalgate: no store in SIGNALGATE_DATA_DIR=${config.dataDir} (it has no signalgate.db): run this where the server runs, ` +
        `or set SIGNALGATE_DATA_DIR to the server's data directory (SIGNALGATE_DATABASE_URL for a server on PostgreSQL); ` +
        `add --create to start a new, empty store there\n`,
    );
    process.exitCode = 1;
    return;
  }
  let store: Store;
  try {
    store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
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
