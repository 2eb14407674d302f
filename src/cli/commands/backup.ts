import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { storeStartupError } from '../../service/startup-error.js';
import { BackupError } from '../../store/backup-error.js';
import { openStore } from '../../store/open-store.js';
import type { Store } from '../../store/store.js';

/**
 * `signalgate backup FILE`: a consistent copy of the embedded SQLite store, taken while the
 * server runs (it needs no stop and does not hold up inbound signals). On PostgreSQL it says
 * to use pg_dump.
 */
export function registerBackupCommand(program: Command): void {
  program
    .command('backup')
    .description('write a consistent copy of the SQLite store in SIGNALGATE_DATA_DIR to FILE, while the server runs (PostgreSQL: use pg_dump)')
    .argument('<file>', 'where to write the copy; must not exist yet')
    .action(async (file: string) => {
      const config = loadConfig();
      let store: Store;
      try {
        store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
      } catch (error) {
        process.stderr.write(`signalgate: ${storeStartupError(config, error).message}\n`);
        process.exitCode = 1;
        return;
      }
      try {
        await store.backup(file);
        process.stdout.write(`signalgate: backed up the store to ${file}\n`);
      } catch (error) {
        if (!(error instanceof BackupError)) throw error;
        process.stderr.write(`signalgate: ${error.message}\n`);
        process.exitCode = 1;
      } finally {
        await store.close();
      }
    });
}
