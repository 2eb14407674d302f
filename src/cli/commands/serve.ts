import type { Command } from 'commander';
import type { Logger } from 'pino';
import { recordPublicUrl } from '../../admin/recorded-public-url.js';
import { ConfigError, loadConfig } from '../../config/config.js';
import { unreachablePublicUrl } from '../../config/unreachable-public-url.js';
import { createLogger, flushLogger } from '../../logging/logger.js';
import type { RunningService } from '../../service/start-service.js';
import { StartupError } from '../../service/startup-error.js';
import { reportEscapedErrors } from '../../service/escaped-errors.js';

/** How long a SIGTERM that arrives during start-up waits for the start to finish. */
const START_GRACE_MS = 5_000;

export function registerServeCommand(program: Command): void {
  program
    .command('serve')
    .description(
      'run the service; settings from the environment: HOST, PORT, SIGNALGATE_DATA_DIR, SIGNALGATE_DATABASE_URL, SIGNALGATE_ADMIN_TOKEN, ' +
        'SIGNALGATE_PUBLIC_URL, SIGNALGATE_LOG_LEVEL, SIGNALGATE_RETENTION, SIGNALGATE_TLS_CERT, SIGNALGATE_TLS_KEY, SIGNALGATE_TRUST_PROXY, ' +
        'SIGNALGATE_INBOUND_THREAD, SIGNALGATE_METRICS_TOKEN (docs/operations.md#settings)',
    )
    .action(async () => {
      // A stop asked for while starting is honoured once the start is done (a generated admin
      // token is then written, not lost): the service drains at once and exits 0, as a stop always
      // does. A start that hangs (a database host that never answers) is given up after a while.
      let stopAsked: string | null = null;
      let giveUp: NodeJS.Timeout | undefined;
      let stop: (signal: string) => void = (signal) => {
        stopAsked ??= signal;
        giveUp ??= setTimeout(() => {
          process.stderr.write(
            `signalgate: stopped by ${signal} before the start finished (waited ${START_GRACE_MS / 1000} s for it)\n`,
          );
          process.exit(0);
        }, START_GRACE_MS);
      };
      process.on('SIGTERM', () => stop('SIGTERM'));
      process.on('SIGINT', () => stop('SIGINT'));

      let config;
      try {
        config = loadConfig();
      } catch (error) {
        if (!(error instanceof ConfigError)) throw error;
        process.stderr.write(`signalgate: cannot start: ${error.message}\n`);
        process.exit(1);
      }
      const logger = createLogger(config.logLevel);
      // SIGHUP reloads the certificate (renewed in place by certbot and the like); one that
      // comes while starting finds the files read moments ago. Without HTTPS it keeps its
      // default meaning, stopping the process.
      let reloadTls = () => undefined as unknown;
      if (config.tls !== null) process.on('SIGHUP', () => void reloadTls());
      // Loaded here, not at the top: every other command would otherwise load the whole HTTP server.
      const { startService } = await import('../../service/start-service.js');
      const service = await startService(config, logger, {}, { onAdminTokenGenerated: printAdminToken }).catch(
        (error: unknown) => {
          if (!(error instanceof StartupError)) throw error;
          return failStart(logger, error);
        },
      );
      // What the admin API renders inbound URLs with, recorded before anyone is told the server
      // listens, so the CLI prints the same URLs.
      const { publicUrl } = service;
      try {
        await recordPublicUrl(service.store, publicUrl);
      } catch (err) {
        logger.fatal({ err }, 'could not record the public URL in the store; stopping');
        await service.close().catch(() => undefined);
        await flushLogger(logger);
        process.exit(1);
      }
      clearTimeout(giveUp);
      // From here on an error no handler caught is logged, not the end of the service.
      reportEscapedErrors((err, origin) =>
        logger.error(
          { err, origin },
          `an error escaped its handler (${origin}); the service keeps running, but report it as a bug`,
        ),
      );
      // The pid is the process to signal (SIGTERM drains, SIGHUP reloads the certificate): under
      // `npm start` it is not npm's.
      logger.info({ url: service.url, store: service.store.kind, publicUrl, pid: process.pid }, 'listening');
      reloadTls = () => service.reloadTls().catch((err: unknown) => logger.error({ err }, 'certificate reload failed'));
      const unreachable = unreachablePublicUrl(publicUrl);
      if (unreachable !== null) {
        // Not fatal (a server behind a proxy may be set up this way for a while), but every
        // inbound URL shown would be useless to the sender it is given to.
        logger.warn({ publicUrl, host: config.host }, unreachable);
        process.stderr.write(`signalgate: warning: ${unreachable}
`);
      }

      let draining = false;
      stop = (signal: string) => {
        if (draining) return;
        draining = true;
        void drain(service, logger, signal);
      };
      if (stopAsked !== null) stop(stopAsked);
    });
}

function printAdminToken(file: string): void {
  process.stderr.write(
    `signalgate: generated the admin token and wrote it to ${file}, readable by this user only; read it with:\n  cat ${file}\n` +
      `  (or set SIGNALGATE_ADMIN_TOKEN to choose your own; \`signalgate admin-token reset\` makes a new one)\n`,
  );
}

async function failStart(logger: Logger, error: StartupError): Promise<never> {
  logger.fatal({ err: error.cause }, error.message);
  await flushLogger(logger);
  process.stderr.write(`signalgate: cannot start: ${error.message}\n`);
  process.exit(1);
}

async function drain(service: RunningService, logger: Logger, signal: string): Promise<void> {
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
}
