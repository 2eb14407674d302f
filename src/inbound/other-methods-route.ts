import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sendProblem } from '../http/send-problem.js';
import { ErrorCode } from '../errors/catalog.js';

const PATH = '/api/inbound/:sourceAuthKey';

/**
 * The inbound URL with any method but POST, answered 405. (POST itself is answered before the
 * router, by `http-handler.ts`.)
 */
export async function inboundOtherMethodsRoute(app: FastifyInstance): Promise<void> {
  const methodNotAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    return sendProblem(reply, [{ code: ErrorCode.METHOD_NOT_ALLOWED, detail: 'send signals with POST' }]);
  };
  app.route({ method: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'], url: PATH, handler: methodNotAllowed });
}
