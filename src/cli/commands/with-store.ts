import { type Config, ConfigError, loadConfig } from '../../config/config.js';
import { storeStartupError } from '../../service/startup-error.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/store.js';

/**
 * Opens the configured store for one command, runs `use` on it and closes it. A store that
 * cannot be opened is said in the sentence `serve` would stop with, naming the setting, not a
 * driver's stack trace (exit 1).
 */
export async function withStore(use: (store: Store, config: Config) => Promise<void>): Promise<void> {
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
    store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  } catch (error) {
    process.stderr.write(`signalgate: ${storeStartupError(config, error).message}\n`);
    process.exitCode = 1;
    return;
  }
  try {
    await use(store, config);
  } finally {
    await store.close();
  }
}
