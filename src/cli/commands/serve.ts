import type { Command } from 'commander';
import { recordPublicUrl } from '../../admin/recorded-public-url.js';
import { loadConfig } from '../../config/config.js';
import { listeningPublicUrl } from '../../config/listening-public-url.js';
import { createLogger, flushLogger } from '../../logging/logger.js';
import { startService } from '../../service/start-service.js';

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description('run the service (HOST, PORT, SIGNALGATE_DATA_DIR, SIGNALGATE_DATABASE_URL, SIGNALGATE_ADMIN_TOKEN, SIGNALGATE_PUBLIC_URL)')
    .action(async () => {
      const config = loadConfig();
      const logger = createLogger(config.logLevel);
      const service = await startService(config, logger);
      if (service.generatedAdminToken !== null) {
        process.stderr.write(
          `signalgate: generated the admin token; it is shown this once, keep it:\n  ${service.generatedAdminToken}\n` +
            `  (or set SIGNALGATE_ADMIN_TOKEN to choose your own)\n`,
        );
      }
      // What the admin API renders inbound URLs with, recorded before anyone is told the server
      // listens, so the CLI prints the same URLs.
      const publicUrl = listeningPublicUrl(config.publicUrl, Number(new URL(service.url).port));
      try {
        await recordPublicUrl(service.store, publicUrl);
      } catch (err) {
        logger.fatal({ err }, 'could not record the public URL in the store; stopping');
        await service.close().catch(() => undefined);
        await flushLogger(logger);
        process.exit(1);
      }
      logger.info({ url: service.url, store: service.store.kind, publicUrl }, 'listening');

      let draining = false;
      const drain = async (signal: string) => {
        if (draining) return;
        draining = true;
        logger.info({ signal }, 'draining: no new connections, finishing in-flight requests');
        try {
          await service.close();
          logger.info('stopped');
          await flushLogger(logger);
          process.exit(0);
        } catch (err) {
          logger.error({ err }, 'shutdown failed');
          await flushLogger(logger);
          process.exit(1);
        }
      };
      process.on('SIGTERM', () => void drain('SIGTERM'));
      process.on('SIGINT', () => void drain('SIGINT'));
    });
}
