import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { deliveryPlugin } from '../delivery/delivery-plugin.js';
import { buildServer } from '../http/build-server.js';
import { resolveAdminToken } from '../security/admin-token.js';
import { openStore } from '../store/open-store.js';
import type { Store } from '../store/store.js';

export interface RunningService {
  app: FastifyInstance;
  store: Store;
  /** The address it listens on, e.g. `http://127.0.0.1:8080`. */
  url: string;
  /** The admin token this start generated, to print once; null when configured or generated before. */
  generatedAdminToken: string | null;
  /** Drains: stops accepting, finishes in-flight requests, closes the store. */
  close(): Promise<void>;
}

/** How long a drain waits for in-flight requests before it closes the remaining connections. */
export const DRAIN_DEADLINE_MS = 10_000;

/** Opens the store, builds every route and listens: what `signalgate serve` runs, and what tests start. */
export async function startService(config: Config, logger: Logger, storeOptions: { schema?: string } = {}): Promise<RunningService> {
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl, ...storeOptions });
  const admin = await resolveAdminToken(store, config.adminToken);
  const app = await buildServer({
    store,
    logger,
    publicUrl: config.publicUrl,
    isAdminToken: admin.isAdminToken,
    plugins: [deliveryPlugin({ store, logger })],
  });
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  return {
    app,
    store,
    url: `http://${host}:${port}`,
    generatedAdminToken: admin.generated,
    close: async () => {
      // A client holding a connection it never sends a request on would keep the drain open
      // for ever; in-flight requests get this long to finish before every socket is cut.
      const deadline = setTimeout(() => app.server.closeAllConnections(), DRAIN_DEADLINE_MS);
      deadline.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(deadline);
      }
      await store.close();
    },
  };
}
