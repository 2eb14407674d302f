import type { Command } from 'commander';
import { BackupError } from '../../store/backup-error.js';
import { withStore } from './with-store.js';

/**
 * `signalgate backup FILE`: a consistent copy of the embedded SQLite store, taken while the
 * server runs (it needs no stop and does not hold up inbound signals). On PostgreSQL it says
 * to use pg_dump.
 */
export function registerBackupCommand(program: Command): void {
  program
    .command('backup')
    .description(
      'write a consistent copy of the SQLite store in SIGNALGATE_DATA_DIR to FILE, while the server runs (PostgreSQL: use pg_dump)',
    )
    .argument('<file>', 'where to write the copy; must not exist yet')
    .action((file: string) =>
      withStore(async (store) => {
        try {
          await store.backup(file);
          process.stdout.write(`signalgate: backed up the store to ${file}\n`);
        } catch (error) {
          if (!(error instanceof BackupError)) throw error;
          process.stderr.write(`signalgate: ${error.message}\n`);
          process.exitCode = 1;
        }
      }),
    );
}
