import type { Command } from 'commander';
import { resetAdminToken } from '../../service/admin-token-file.js';
import { withStore } from './with-store.js';

/**
 * `signalgate admin-token reset`: a new generated admin token in place of the stored one, written
 * to the data directory's `admin-token` file (never printed). A server already running keeps
 * the token it started with until it is restarted.
 */
export function registerAdminTokenCommand(program: Command): void {
  const adminToken = program
    .command('admin-token')
    .description('the generated admin token (when SIGNALGATE_ADMIN_TOKEN is unset)');
  adminToken
    .command('reset')
    .description(
      'make a new admin token, written to SIGNALGATE_DATA_DIR/admin-token; the old one stops working once the server restarts',
    )
    .action(() =>
      withStore(async (store, config) => {
        if (config.adminToken !== null) {
          process.stderr.write(
            'signalgate: SIGNALGATE_ADMIN_TOKEN is set, so the admin token is that variable and there is nothing to reset; to change it, set a new one (openssl rand -base64 32) and restart the server\n',
          );
          process.exitCode = 1;
          return;
        }
        const file = await resetAdminToken(store, config.dataDir);
        process.stdout.write(
          `signalgate: made a new admin token and wrote it to ${file}, readable by this user only; read it with: cat ${file}\n` +
            'The old token no longer works once the server restarts (dashboard sign-ins with it end too); restart the server now.\n',
        );
      }),
    );
}
