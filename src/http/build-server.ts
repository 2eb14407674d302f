import http from 'node:http';
import https from 'node:https';
import Fastify, {
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  LogController,
} from 'fastify';
import type { Logger } from 'pino';
import { ErrorCode } from '../errors/catalog.js';
import { InboundAccessLog } from '../logging/inbound-access-log.js';
import { WrongKeyLog } from '../logging/wrong-key-log.js';
import { maskPath } from '../logging/logger.js';
import type { InboundLane } from '../inbound/inbound-lane.js';
import { createInboundHandler } from '../inbound/http-handler.js';
import { INBOUND_DESCRIPTION } from '../inbound/inbound-description.js';
import { inboundKeyOf, inboundRoutePath } from '../inbound/inbound-url.js';
import { inboundOtherMethodsRoute } from '../inbound/other-methods-route.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { Store } from '../store/store.js';
import fastifyCookie from '@fastify/cookie';
import { dashboardRoutes } from '../dashboard/dashboard-routes.js';
import type { DashboardSessions } from '../dashboard/dashboard-sessions.js';
import { adminRoutes } from './admin-routes.js';
import { apiDescriptionRoutes } from './api-description-routes.js';
import { RouteCatalog } from './route-catalog.js';
import type { ClientAddressOf } from '../http-kit/client-address.js';
import { ConnectionErrors } from './connection-errors.js';
import { connectionTimeoutOptions } from './connection-timeouts.js';
import type { DrainState } from '../http-kit/drain-state.js';
import { healthRoutes } from './health-routes.js';
import { RefusedBody, useStrictJsonBodies } from './json-body-parser.js';
import { MAX_JSON_BODY_BYTES } from '../http-kit/json-body-limits.js';
import { applySecurityHeaders, securityHeaders } from './security-headers.js';
import { WrongTokens } from '../http-kit/wrong-tokens.js';
import { sendProblem } from '../http-kit/send-problem.js';
import {
  REQUEST_FAILED,
  SHUTTING_DOWN,
  STORE_RETRY_AFTER_SECONDS,
  STORE_UNAVAILABLE,
} from '../http-kit/server-problems.js';
import { isStoreUnavailable } from '../store/store-unavailable.js';
import type { TransportOptions } from '../notifications/channel-transports.js';
import type { Notifier } from '../notifications/notifier.js';
import { DEFAULT_TRANSPORT } from '../notifications/transport-defaults.js';
import { tellInboundAlert } from './inbound-alerts.js';

export interface ServerOptions {
  store: Store;
  /** Where inbound signals are checked and committed. */
  inbound: InboundLane;
  logger: Logger;
  publicUrl: string;
  isAdminToken: (token: string) => boolean;
  /** Dashboard sign-ins (the dashboard at `/` and the admin API it calls). */
  sessions: DashboardSessions;
  /** What `/metrics` serves; the inbound handler counts into it. */
  metrics: ServiceMetrics;
  /** SIGNALGATE_METRICS_TOKEN, which reads `/metrics` beside the admin token. */
  metricsToken?: string | null;
  /** Where a request came from (SIGNALGATE_TRUST_PROXY decides whether X-Forwarded-For is believed). */
  clientAddressOf: ClientAddressOf;
  /** HTTPS with this certificate and key; plain HTTP when null. */
  tls: { cert: Buffer; key: Buffer } | null;
  /** Notifications: who is told of refusals and quota thresholds, and how a channel's test is sent. */
  notifications?: { notifier: Notifier | null; transport: TransportOptions };
  /** Extra route plugins (agent delivery) registered beside the core ones. */
  plugins?: Array<(app: FastifyInstance) => Promise<void>>;
}

/**
 * The HTTP edge: routes only, every decision lives in the modules they call. Inbound signals
 * (`POST /api/inbound/{key}`) are answered on node:http directly; everything else goes
 * through Fastify's router.
 */
export async function buildServer(opts: ServerOptions): Promise<FastifyInstance> {
  // Requests that reach a draining server are refused before anything is recorded.
  const drain: DrainState = { closing: false };
  const accessLog = new InboundAccessLog(opts.logger);
  const { clientAddressOf } = opts;
  const wrongKeyLog = new WrongKeyLog(opts.logger);
  opts.metrics.countWrongKeys(() => wrongKeyLog.total);
  const wrongTokens = new WrongTokens(opts.logger, clientAddressOf);
  opts.metrics.countWrongTokens(wrongTokens.totals);
  const inbound = createInboundHandler({
    lane: opts.inbound,
    logger: opts.logger,
    accessLog,
    wrongKeyLog,
    drain,
    clientAddressOf,
    meter: opts.metrics.inbound,
    ...(opts.notifications?.notifier && { onAlert: tellInboundAlert(opts.notifications.notifier) }),
  });
  const connectionErrors = new ConnectionErrors(opts.logger);
  const headers = securityHeaders(opts.tls !== null);
  const app = Fastify({
    serverFactory: (route) => {
      const dispatch = (req: http.IncomingMessage, res: http.ServerResponse) => {
        connectionErrors.track(req, res);
        applySecurityHeaders(res, headers);
        const key = inboundKeyOf(req.method, req.url);
        if (key === null) route(req, res);
        else inbound(req, res, key);
      };
      // The same dispatch over TLS: the certificate can be replaced later with setSecureContext.
      const server =
        opts.tls === null
          ? http.createServer(connectionTimeoutOptions(), dispatch)
          : https.createServer({ ...connectionTimeoutOptions(), cert: opts.tls.cert, key: opts.tls.key }, dispatch);
      return server;
    },
    // A child of its own, so start-up can quiet Fastify's "Server listening at" lines (which say
    // http:// for an HTTPS server built by serverFactory) without quieting anything else.
    loggerInstance: opts.logger.child({}) as FastifyBaseLogger,
    // One access line per request is written by the onResponse hook below, with the key masked.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: MAX_JSON_BODY_BYTES,
    return503OnClosing: false,
    clientErrorHandler: connectionErrors.onClientError,
    forceCloseConnections: 'idle',
    // Fastify's own answer to a path that is not valid percent-encoding is not a problem body,
    // and it skips the onResponse hook that writes the access line.
    frameworkErrors: async (error, request, reply) => {
      await sendProblem(reply, [
        error.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? {
              code: ErrorCode.NOT_FOUND,
              detail: 'no record has an id this long (ids are at most 100 characters); check the id in the path',
            }
          : {
              code: ErrorCode.INVALID_REQUEST,
              detail: 'the request path is not valid percent-encoding; encode reserved characters as %XX',
            },
      ]);
      logAccess(request, reply, opts.isAdminToken, clientAddressOf);
    },
  });

  useStrictJsonBodies(app);
  // Before any route: every route registered from here on is seen, described or not.
  const routes = new RouteCatalog();
  app.addHook('onRoute', routes.onRoute);
  app.decorate('routeCatalog', routes);
  routes.answeredOutsideRouter({ method: 'POST', url: inboundRoutePath, api: INBOUND_DESCRIPTION });

  app.addHook('preClose', async () => {
    drain.closing = true;
  });
  // onClose hooks run once the server has closed, so every inbound answer is out by then.
  app.addHook('onClose', async () => {
    accessLog.flush();
    wrongKeyLog.close();
    wrongTokens.close();
  });
  app.addHook('onRequest', async (_request, reply) => {
    if (!drain.closing) return;
    reply.header('connection', 'close').header('retry-after', '1');
    return sendProblem(reply, [SHUTTING_DOWN]);
  });

  // Answers finished while draining close their connection, so keep-alive clients do not hold
  // the shutdown open until their idle timeout.
  app.addHook('onSend', async (_request, reply, payload) => {
    if (drain.closing) reply.header('connection', 'close');
    return payload;
  });

  app.addHook('onResponse', async (request, reply) => {
    // A wrong token's request is in its address's line of the minute, not a line each.
    if (!wrongTokens.isCounted(request.raw)) logAccess(request, reply, opts.isAdminToken, clientAddressOf);
  });

  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, request, reply) => {
    if (isStoreUnavailable(error)) {
      request.log.warn({ err: error }, 'store unavailable; answered 503');
      reply.header('retry-after', String(STORE_RETRY_AFTER_SECONDS));
      return sendProblem(reply, [STORE_UNAVAILABLE]);
    }
    if (error instanceof RefusedBody) return sendProblem(reply, [error.problem]);
    const status = error.statusCode ?? 500;
    if (status === 413) {
      return sendProblem(reply, [
        {
          code: ErrorCode.PAYLOAD_TOO_LARGE,
          detail: `the body is larger than the ${MAX_JSON_BODY_BYTES} bytes a request may send; send less at once`,
        },
      ]);
    }
    if (status >= 500) request.log.error({ err: error }, 'request failed');
    if (status >= 500) return sendProblem(reply, [REQUEST_FAILED], 500);
    if (status === 415) {
      // What `curl -d` sends (application/x-www-form-urlencoded) lands here: say what to send.
      const given = request.headers['content-type'] ?? 'none';
      return sendProblem(reply, [
        {
          code: ErrorCode.UNSUPPORTED_MEDIA_TYPE,
          param: 'Content-Type',
          detail: `send the body as JSON with Content-Type: application/json (got ${given.slice(0, 100)})`,
        },
      ]);
    }
    return sendProblem(
      reply,
      [{ code: ErrorCode.INVALID_REQUEST, detail: `the request could not be read: ${error.message}` }],
      status,
    );
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(reply, [
      { code: ErrorCode.NOT_FOUND, detail: `no route ${request.method} ${request.url.split('?')[0]}` },
    ]),
  );

  await app.register(healthRoutes({ ...opts, metricsToken: opts.metricsToken ?? null, wrongTokens }));
  await app.register(apiDescriptionRoutes(routes));
  await app.register(inboundOtherMethodsRoute);
  await app.register(fastifyCookie);
  await app.register(adminRoutes, {
    store: opts.store,
    publicUrl: opts.publicUrl,
    isAdminToken: opts.isAdminToken,
    sessions: opts.sessions,
    wrongTokens,
    notificationTransport: opts.notifications?.transport ?? DEFAULT_TRANSPORT,
    notifier: opts.notifications?.notifier ?? null,
  });
  await app.register(dashboardRoutes, {
    sessions: opts.sessions,
    isAdminToken: opts.isAdminToken,
    publicUrl: opts.publicUrl,
    wrongTokens,
  });
  for (const plugin of opts.plugins ?? []) await app.register(plugin);
  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route the server has, for the API description (and the test that all are in it). */
    routeCatalog: RouteCatalog;
  }
}

/**
 * The access line every routed request gets (the inbound handler writes the same shape). The
 * admin token is masked wherever it stands in the path, as an operator may paste it there.
 */
function logAccess(
  request: FastifyRequest,
  reply: FastifyReply,
  isAdminToken: (token: string) => boolean,
  clientAddressOf: ClientAddressOf,
): void {
  request.log.info(
    {
      method: request.method,
      url: maskPath(request.url, isAdminToken),
      statusCode: reply.statusCode,
      ms: Math.round(reply.elapsedTime * 100) / 100,
      clientAddress: clientAddressOf(request.raw),
    },
    'request',
  );
}
