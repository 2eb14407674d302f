import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../http-kit/send-problem.js';
import { ErrorCode } from '../errors/catalog.js';
import type { RouteDescription } from '../openapi/index.js';
import { inboundRoutePath } from './inbound-url.js';

const NOT_ALLOWED: RouteDescription = {
  summary: 'Not allowed',
  description: 'Signals are sent with POST; every other method answers 405 with Allow: POST.',
  tag: 'inbound',
  auth: 'none',
  answers: {},
  problems: [ErrorCode.METHOD_NOT_ALLOWED],
};

/**
 * The inbound URL with any method but POST, answered 405. (POST itself is answered before the
 * router, by `http-handler.ts`.)
 */
export async function inboundOtherMethodsRoute(app: FastifyInstance): Promise<void> {
  const methodNotAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    return sendProblem(reply, [{ code: ErrorCode.METHOD_NOT_ALLOWED, detail: 'send signals with POST' }]);
  };
  app.route({
    method: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    url: inboundRoutePath,
    config: { api: NOT_ALLOWED },
    handler: methodNotAllowed,
  });
}
