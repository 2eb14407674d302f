import type { FastifyInstance } from 'fastify';
import type https from 'node:https';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { listeningPublicUrl } from '../config/listening-public-url.js';
import { DashboardSessions } from '../dashboard/dashboard-sessions.js';
import { deliveryPlugin } from '../delivery/delivery-plugin.js';
import { startExpirySweeper } from '../delivery/expiry-sweeper.js';
import { buildServer } from '../http/build-server.js';
import { clientAddressResolver } from '../http-kit/client-address.js';
import { readTlsCredentials, type TlsCredentials, TlsFilesError } from '../http/tls-credentials.js';
import { resolveAdminToken } from '../security/admin-token.js';
import type { InboundLane } from '../inbound/inbound-lane.js';
import { startInboundLane } from '../inbound/start-inbound-lane.js';
import { ServiceMetrics } from '../metrics/service-metrics.js';
import { openBackend, serverDirectory } from '../store/open-store.js';
import type { Store } from '../store/store.js';
import { adminTokenFile, removeAdminTokenFile, writeAdminTokenFile } from './admin-token-file.js';
import { looseModes } from '../files/private-files.js';
import { lockDataDirectory } from './data-directory-lock.js';
import { startRetention } from './retention.js';
import { startNotifications } from './notifications.js';
import { listenStartupError, StartupError, storeStartupError } from './startup-error.js';

export interface RunningService {
  app: FastifyInstance;
  store: Store;
  /** Where inbound signals are checked and committed. */
  inbound: InboundLane;
  /** The address it listens on, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** What inbound URLs are rendered with: SIGNALGATE_PUBLIC_URL, or `http://HOST:PORT` with the port it got. */
  publicUrl: string;
  /**
   * Reads SIGNALGATE_TLS_CERT and SIGNALGATE_TLS_KEY again (on SIGHUP) and serves new
   * connections with them; open connections keep the certificate they began with. Files that
   * cannot be served leave the current certificate in place and are logged as an error.
   * Nothing to do without HTTPS.
   */
  reloadTls(): Promise<void>;
  /** Drains: stops accepting, finishes in-flight requests, closes the store. */
  close(): Promise<void>;
}

/** How long a drain waits for in-flight requests before it closes the remaining connections. */
export const DRAIN_DEADLINE_MS = 10_000;

/**
 * Opens the store, builds every route and listens: what `signalgate serve` runs, and what tests
 * start. When the store needs its directory to one server (the embedded store), it first takes
 * it (`server.lock`), and gives it back once closed.
 */
export async function startService(
  config: Config,
  logger: Logger,
  storeOptions: { schema?: string } = {},
  events: { onAdminTokenGenerated?: (file: string) => void } = {},
): Promise<RunningService> {
  const lock = serverDirectory(config) === null ? null : lockDataDirectory(config);
  if (lock?.tookOver) logger.warn({ reason: lock.tookOver }, 'took over the data directory of a server that is gone');
  if (lock !== null) warnOfLooseModes(config.dataDir, logger);
  let service: RunningService;
  try {
    service = await startOnStore(config, logger, storeOptions, events);
  } catch (error) {
    lock?.release();
    throw error;
  }
  if (lock === null) return service;
  return {
    ...service,
    close: async () => {
      try {
        await service.close();
      } finally {
        lock.release();
      }
    },
  };
}

/**
 * The data directory holds the sources' HMAC secrets and every signal: one that other users of
 * the machine can read (made before this version, or loosened by hand) is said at each start.
 */
function warnOfLooseModes(dataDir: string, logger: Logger): void {
  for (const loose of looseModes(dataDir)) {
    logger.warn({ path: loose.path, mode: loose.mode }, loose.warning);
  }
}

async function startOnStore(
  config: Config,
  logger: Logger,
  storeOptions: { schema?: string },
  events: { onAdminTokenGenerated?: (file: string) => void },
): Promise<RunningService> {
  const tls = config.tls === null ? null : await readTlsCredentials(config.tls).catch(tlsStartupError);
  if (tls !== null) logCertificate(logger, tls, 'serving HTTPS');
  const backend = await openBackend({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    inboundThread: config.inboundThread,
    ...storeOptions,
  }).catch((error: unknown) => {
    throw storeStartupError(config, error);
  });
  const { store } = backend;
  const admin = await resolveAdminToken(store, config.adminToken).catch(async (error: unknown) => {
    await store.close().catch(() => undefined);
    throw error;
  });
  if (config.adminToken !== null) forgetGeneratedToken(config.dataDir, logger);
  // Written at once: the digest is stored now, so a start that fails after this point must not
  // take the token with it.
  if (admin.generated !== null) {
    const file = await writeAdminTokenFile(config.dataDir, admin.generated).catch(async (error: unknown) => {
      await store.close().catch(() => undefined);
      throw new StartupError(
        `could not write the generated admin token to ${adminTokenFile(config.dataDir)} (${error instanceof Error ? error.message : String(error)}); make SIGNALGATE_DATA_DIR writable by this user, then run \`signalgate admin-token reset\` (or set SIGNALGATE_ADMIN_TOKEN)`,
        { cause: error },
      );
    });
    logger.warn(
      { file },
      `generated the admin token and wrote it to ${file}, readable by this user only; read it with: cat ${file}`,
    );
    events.onAdminTokenGenerated?.(file);
  }
  const inbound = await startInboundLane(backend, {
    onFailure: (error) =>
      logger.fatal(
        { err: error },
        'the inbound thread stopped; every inbound request now fails until the service is restarted',
      ),
  });
  const metrics = new ServiceMetrics(store);
  metrics.deliveries.watch(store);
  const notifications = startNotifications(store, logger, config, tls);
  const app = await buildServer({
    store,
    inbound,
    metrics,
    metricsToken: config.metricsToken ?? null,
    logger,
    publicUrl: config.publicUrl,
    isAdminToken: admin.isAdminToken,
    sessions: new DashboardSessions(store, admin.digest),
    clientAddressOf: clientAddressResolver(config.trustProxy),
    tls,
    notifications: { notifier: notifications.notifier, transport: notifications.transport },
    plugins: [
      deliveryPlugin({
        store,
        logger,
        notifier: notifications.notifier,
        agentOfflineMs: notifications.agentOfflineMs,
        watching: notifications.watching,
      }),
    ],
  });
  try {
    await listenQuietly(app, config.host, config.port);
  } catch (error) {
    await app.close().catch(() => undefined);
    await notifications.stop().catch(() => undefined);
    await inbound.close().catch(() => undefined);
    await store.close().catch(() => undefined);
    throw listenStartupError(config, error);
  }
  const retention = startRetention(store, logger, { retentionMs: config.retentionMs });
  const expirySweeper = startExpirySweeper(store, logger);
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    app,
    store,
    inbound,
    url: `${tls === null ? 'http' : 'https'}://${host}:${port}`,
    publicUrl: listeningPublicUrl(config.publicUrl, port),
    reloadTls: async () => {
      if (config.tls === null) return;
      let fresh: TlsCredentials;
      try {
        fresh = await readTlsCredentials(config.tls);
      } catch (error) {
        if (!(error instanceof TlsFilesError)) throw error;
        logger.error(`certificate not reloaded, the previous one is still served: ${error.message}`);
        return;
      }
      (app.server as https.Server).setSecureContext({ cert: fresh.cert, key: fresh.key });
      logCertificate(logger, fresh, 'certificate reloaded');
      notifications.certificate(fresh);
    },
    close: async () => {
      // First, while the delivery plugin still logs what it expires.
      await expirySweeper.stop();
      // A client holding a connection it never sends a request on would keep the drain open
      // for ever; in-flight requests get this long to finish before every socket is cut.
      const deadline = setTimeout(() => app.server.closeAllConnections(), DRAIN_DEADLINE_MS);
      deadline.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(deadline);
      }
      await retention.stop();
      await notifications.stop();
      await inbound.close();
      await store.close();
    },
  };
}

/** SIGNALGATE_ADMIN_TOKEN is set: the file of a generated token, which no longer works, goes. */
function forgetGeneratedToken(dataDir: string, logger: Logger): void {
  try {
    removeAdminTokenFile(dataDir);
  } catch (err) {
    logger.warn(
      { err, file: adminTokenFile(dataDir) },
      'could not remove the file of the generated admin token, which no longer works; remove it',
    );
  }
}

function tlsStartupError(error: unknown): never {
  if (error instanceof TlsFilesError) throw new StartupError(error.message, { cause: error });
  throw error;
}

function logCertificate(logger: Logger, tls: TlsCredentials, message: string): void {
  const { summary } = tls;
  if (summary.expired)
    logger.warn(
      { certificate: summary },
      `${message}, but the certificate expired at ${summary.validTo}; replace it and send SIGHUP`,
    );
  else logger.info({ certificate: summary }, message);
}

/**
 * Listens without Fastify's own "Server listening at …" lines: with the server made by
 * `serverFactory` they say http:// even over HTTPS, and the service writes the one true
 * `listening` line itself once it is ready. Fastify writes them in the listen callback, so the
 * level is back before any connection can be served.
 */
async function listenQuietly(app: FastifyInstance, host: string, port: number): Promise<void> {
  const level = app.log.level;
  if (['info', 'debug', 'trace'].includes(level)) app.log.level = 'warn';
  try {
    await app.listen({ host, port });
  } finally {
    app.log.level = level;
  }
}
