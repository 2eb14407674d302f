import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { ErrorCode } from '../errors/catalog.js';
import type { InboundLane } from '../inbound/inbound-lane.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';
import type { Store } from '../store/store.js';
import { bearerToken } from '../http-kit/bearer-token.js';
import { HEALTHZ_DESCRIPTION, READYZ_DESCRIPTION } from './health-description.js';
import { sendProblem } from '../http-kit/send-problem.js';
import type { WrongTokens } from '../http-kit/wrong-tokens.js';

export interface HealthOptions {
  store: Store;
  inbound: InboundLane;
  metrics: ServiceMetrics;
  isAdminToken: (token: string) => boolean;
  /** SIGNALGATE_METRICS_TOKEN: a token that reads `/metrics` and nothing else; null when unset. */
  metricsToken: string | null;
  logger: Logger;
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
 * The first two need no token and never show a secret; why they fail (a database's error, the
 * disk's free bytes) only to the admin or metrics token. Readiness probes the store one call at
 * a time, on no connection the requests use.
 */
export function healthRoutes(opts: HealthOptions) {
  const isMetricsToken = opts.metricsToken === null ? () => false : sameToken(opts.metricsToken);
  return async (app: FastifyInstance): Promise<void> => {
    const { store, inbound } = opts;
    // One probe at a time, whoever asks and however often: callers during a probe share its answer.
    let probing: Promise<string | null> | null = null;
    // Logged when it changes, so the reason a caller without a token is not told is in the log.
    let last: string | null = null;
    const probe = () => {
      probing ??= store
        .reachabilityProblem()
        .then((problem) => {
          if (problem !== null && last === null)
            opts.logger.warn({ reason: problem }, `not ready: inbound signals cannot be stored: ${problem}`);
          if (problem === null && last !== null) opts.logger.info('ready again: the store answers');
          last = problem;
          return problem;
        })
        .finally(() => (probing = null));
      return probing;
    };

    /**
     * Whether the caller may read why it is failing: the reasons name database errors and disk
     * space, which are nobody else's business. A wrong token is a guess like any other.
     */
    const mayReadDetail = (request: FastifyRequest, reply: FastifyReply): boolean | FastifyReply => {
      const token = bearerToken(request);
      if (token === null) return false;
      const refused = opts.wrongTokens.refuse(request, reply, 'metrics', 'Authorization');
      if (refused !== undefined) return refused;
      if (opts.isAdminToken(token) || isMetricsToken(token)) return true;
      opts.wrongTokens.wrong(request, 'metrics');
      return unauthorized(reply);
    };
    const failing = (reply: FastifyReply, detailed: boolean, publicDetail: string, detail: string) =>
      reply.code(503).send({ status: 'failing', store: store.kind, detail: detailed ? detail : publicDetail });

    app.get('/healthz', { config: { api: HEALTHZ_DESCRIPTION } }, async (request, reply) => {
      const detailed = mayReadDetail(request, reply);
      if (typeof detailed !== 'boolean') return detailed;
      const failure = inbound.failure;
      if (failure === null) return { status: 'ok', store: store.kind };
      return failing(
        reply,
        detailed,
        INBOUND_FAILED,
        `inbound signals cannot be received (${failure.message}); restart the service`,
      );
    });

    app.get('/readyz', { config: { api: READYZ_DESCRIPTION } }, async (request, reply) => {
      const detailed = mayReadDetail(request, reply);
      if (typeof detailed !== 'boolean') return detailed;
      const failure = inbound.failure;
      if (failure !== null)
        return failing(
          reply,
          detailed,
          INBOUND_FAILED,
          `inbound signals cannot be received (${failure.message}); restart the service`,
        );
      const unreachable = await probe();
      if (unreachable === null) return { status: 'ready', store: store.kind };
      return failing(reply, detailed, STORE_FAILING, `inbound signals cannot be stored: ${unreachable}`);
    });

    app.get('/metrics', async (request, reply) => {
      const token = bearerToken(request);
      if (token !== null) {
        const refused = opts.wrongTokens.refuse(request, reply, 'metrics', 'Authorization');
        if (refused !== undefined) return refused;
      }
      if (token === null || !(opts.isAdminToken(token) || isMetricsToken(token))) {
        if (token !== null) opts.wrongTokens.wrong(request, 'metrics');
        return unauthorized(reply);
      }
      const { contentType, text } = await opts.metrics.render();
      return reply.header('content-type', contentType).send(text);
    });
  };
}

const INBOUND_FAILED =
  'inbound signals cannot be received; restart the service (the log says why; so does this answer, with the metrics token as a bearer)';
const STORE_FAILING =
  'inbound signals cannot be stored now; this recovers by itself once the store is back (the log says why; so does this answer, with the metrics token as a bearer)';

function unauthorized(reply: FastifyReply): FastifyReply {
  return sendProblem(reply, [
    {
      code: ErrorCode.UNAUTHORIZED,
      param: 'Authorization',
      detail: 'send Authorization: Bearer with the admin token or the metrics token (SIGNALGATE_METRICS_TOKEN)',
    },
  ]);
}

/** Compares in constant time (by digest, so lengths do not show either). */
function sameToken(expected: string): (token: string) => boolean {
  const digest = createHash('sha256').update(expected).digest();
  return (token) => timingSafeEqual(createHash('sha256').update(token).digest(), digest);
}
