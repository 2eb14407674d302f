import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from 'fastify';
import type { Logger } from 'pino';
import type { ErrorCode } from '../errors/catalog.js';
import type { Store } from '../store/store.js';
import { adminRoutes } from './admin-routes.js';
import { inboundRoutes } from './inbound-route.js';
import { sendProblem } from './send-problem.js';

export interface ServerOptions {
  store: Store;
  logger: Logger;
  publicUrl: string;
  isAdminToken: (token: string) => boolean;
  /** Extra route plugins (agent delivery) registered beside the core ones. */
  plugins?: Array<(app: FastifyInstance) => Promise<void>>;
}

/** The HTTP edge: routes only, every decision lives in the modules they call. */
export async function buildServer(opts: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: opts.logger as FastifyBaseLogger,
    // One access line per request is written by the onResponse hook below, with the key masked.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 64 * 1024,
    requestTimeout: 30_000,
    return503OnClosing: false,
    forceCloseConnections: 'idle',
  });

  // Requests that reach a draining server are refused before anything is recorded.
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!closing) return;
    reply.header('connection', 'close').header('retry-after', '1');
    return sendProblem(reply, [
      { code: 'SHUTTING_DOWN', detail: 'the server is shutting down and recorded nothing; send the request again in a moment' },
    ]);
  });

  // Answers finished while draining close their connection, so keep-alive clients do not hold
  // the shutdown open until their idle timeout.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (closing) reply.header('connection', 'close');
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    request.log.info({ req: request, res: reply, ms: Math.round(reply.elapsedTime * 100) / 100 }, 'request');
  });

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    const code: ErrorCode =
      status === 413 ? 'PAYLOAD_TOO_LARGE' : status === 415 ? 'UNSUPPORTED_MEDIA_TYPE' : status < 500 ? 'INVALID_REQUEST' : 'INTERNAL_ERROR';
    const detail =
      status >= 500
        ? 'the server failed to handle this request; nothing was acknowledged, so it is safe to retry'
        : `the request could not be read: ${error.message}`;
    return sendProblem(reply, [{ code, detail }], status >= 500 ? 500 : status);
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, [{ code: 'NOT_FOUND', detail: `no route ${request.method} ${request.url.split('?')[0]}` }]),
  );

  app.get('/healthz', async () => ({ status: 'ok', store: opts.store.kind }));
  await app.register(inboundRoutes, { store: opts.store });
  await app.register(adminRoutes, { store: opts.store, publicUrl: opts.publicUrl, isAdminToken: opts.isAdminToken });
  for (const plugin of opts.plugins ?? []) await app.register(plugin);
  return app;
}
