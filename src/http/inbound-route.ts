import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from './send-problem.js';
import { ErrorCode } from '../errors/catalog.js';

const PATH = '/api/inbound/:sourceAuthKey';

/**
 * The inbound URL with any method but POST. (POST itself is answered before the router, by
 * `inbound-handler.ts`.)
 */
export async function inboundRoutes(app: FastifyInstance): Promise<void> {
  const methodNotAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    return sendProblem(reply, [{ code: ErrorCode.METHOD_NOT_ALLOWED, detail: 'send signals with POST' }]);
  };
  app.route({ method: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], url: PATH, handler: methodNotAllowed });
}
