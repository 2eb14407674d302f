import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { ErrorCode } from '../errors/catalog.js';
import type { InboundLane } from '../inbound/inbound-lane.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { Store } from '../store/store.js';
import { bearerToken } from './bearer-token.js';
import { HEALTHZ_DESCRIPTION, READYZ_DESCRIPTION } from './health-description.js';
import { sendProblem } from './send-problem.js';
import type { WrongTokens } from './wrong-tokens.js';

export interface HealthOptions {
  store: Store;
  inbound: InboundLane;
  metrics: ServiceMetrics;
  isAdminToken: (token: string) => boolean;
  /** SIGNALGATE_METRICS_TOKEN: a token that reads `/metrics` and nothing else; null when unset. */
  metricsToken: string | null;
  /** Wrong tokens counted per client address, and the addresses that sent too many refused. */
  wrongTokens: WrongTokens;
}

/**
 * What a supervisor, a load balancer and Prometheus ask:
 * - `GET /healthz` (liveness): 200 while the process serves; 503 only when it cannot receive
 *   signals until restarted (the inbound thread died), so a supervisor restarts it.
 * - `GET /readyz` (readiness): 200 when signals can be received and the store answers, else
 *   503 with the reason, so a load balancer sends signals elsewhere meanwhile (a restart would
 *   not bring a store back).
 * - `GET /metrics`: Prometheus text, for the admin token or the metrics token.
 * The first two need no token and never show a secret.
 */
export function healthRoutes(opts: HealthOptions) {
  const isMetricsToken = opts.metricsToken === null ? () => false : sameToken(opts.metricsToken);
  return async (app: FastifyInstance): Promise<void> => {
    const { store, inbound } = opts;
    const inboundFailure = () =>
      inbound.failure === null ? null : `inbound signals cannot be received (${inbound.failure.message}); restart the service`;

    app.get('/healthz', { config: { api: HEALTHZ_DESCRIPTION } }, async (_request, reply) => {
      const failure = inboundFailure();
      if (failure === null) return { status: 'ok', store: store.kind };
      return reply.code(503).send({ status: 'failing', store: store.kind, detail: failure });
    });

    app.get('/readyz', { config: { api: READYZ_DESCRIPTION } }, async (_request, reply) => {
      const failure = inboundFailure();
      if (failure !== null) return reply.code(503).send({ status: 'failing', store: store.kind, detail: failure });
      const unreachable = await store.reachabilityProblem();
      if (unreachable === null) return { status: 'ready', store: store.kind };
      return reply.code(503).send({ status: 'failing', store: store.kind, detail: `inbound signals cannot be stored: ${unreachable}` });
    });

    app.get('/metrics', async (request, reply) => {
      const token = bearerToken(request);
      if (token !== null) {
        const refused = opts.wrongTokens.refuse(request, reply, 'metrics', 'Authorization');
        if (refused !== undefined) return refused;
      }
      if (token === null || !(opts.isAdminToken(token) || isMetricsToken(token))) {
        if (token !== null) opts.wrongTokens.wrong(request, 'metrics');
        return sendProblem(reply, [
          {
            code: ErrorCode.UNAUTHORIZED,
            param: 'Authorization',
            detail: 'send Authorization: Bearer with the admin token or the metrics token (SIGNALGATE_METRICS_TOKEN)',
          },
        ]);
      }
      const { contentType, text } = await opts.metrics.render();
      return reply.header('content-type', contentType).send(text);
    });
  };
}

/** Compares in constant time (by digest, so lengths do not show either). */
function sameToken(expected: string): (token: string) => boolean {
  const digest = createHash('sha256').update(expected).digest();
  return (token) => timingSafeEqual(createHash('sha256').update(token).digest(), digest);
}
