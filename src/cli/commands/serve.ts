import type { Command } from 'commander';
import { loadConfig } from '../../config/config.js';
import { buildServer } from '../../http/build-server.js';
import { createLogger } from '../../logging/logger.js';
import { resolveAdminToken } from '../../security/admin-token.js';
import { openStore } from '../../store/open-store.js';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the service (HOST, PORT, SIGNALGATE_DATA_DIR, SIGNALGATE_DATABASE_URL, SIGNALGATE_ADMIN_TOKEN, SIGNALGATE_PUBLIC_URL)')
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel);
      const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
      const admin = await resolveAdminToken(store, config.adminToken);
      if (admin.generated !== null) {
        process.stderr.write(
          `signalgate: generated the admin token; it is shown this once, keep it:\n  ${admin.generated}\n` +
            `  (or set SIGNALGATE_ADMIN_TOKEN to choose your own)\n`,
        );
      }
      const app = await buildServer({ store, logger, publicUrl: config.publicUrl, isAdminToken: admin.isAdminToken });
      await app.listen({ host: config.host, port: config.port });
      const address = app.server.address();
      const port = typeof address === 'object' && address !== null ? address.port : config.port;
      logger.info({ host: config.host, port, store: store.kind, publicUrl: config.publicUrl }, 'listening');

      let draining = false;
      const drain = async (signal: string) => {
        if (draining) return;
        draining = true;
        logger.info({ signal }, 'draining: no new connections, finishing in-flight requests');
        try {
          await app.close();
          await store.close();
          logger.info('stopped');
          process.exit(0);
        } catch (err) {
          logger.error({ err }, 'shutdown failed');
          process.exit(1);
        }
      };
      process.on('SIGTERM', () => void drain('SIGTERM'));
      process.on('SIGINT', () => void drain('SIGINT'));
    });
}
