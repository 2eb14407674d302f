import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_BODY_BYTES, receiveSignal } from '../ingest/receive-signal.js';
import { newSignalId } from '../security/signal-id.js';
import type { Store } from '../store/store.js';
import { readBoundedBody } from './read-body.js';
import { sendProblem } from './send-problem.js';

const PATH = '/api/inbound/:sourceAuthKey';

/**
 * `POST /api/inbound/{sourceAuthKey}`. The body is read by the route itself, after the key
 * check, so checks run in CONTRACT §3 order and an oversized body is never buffered whole.
 */
export async function inboundRoutes(app: FastifyInstance, opts: { store: Store }): Promise<void> {
  const { store } = opts;
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null, undefined));

  app.post<{ Params: { sourceAuthKey: string }; Querystring: Record<string, string> }>(PATH, async (request, reply) => {
    const receivedAtMillis = Date.now();
    const source = await store.findSourceByAuthKey(request.params.sourceAuthKey);
    if (source === null) {
      return sendProblem(reply, [
        {
          code: 'INVALID_SOURCE_KEY',
          detail: 'no source has this key; copy the inbound URL from the source detail view (the key may have been rotated)',
        },
      ]);
    }
    const { body, tooLarge } = await readBoundedBody(request.raw, MAX_BODY_BYTES);
    if (tooLarge) reply.header('connection', 'close');
    const answer = await receiveSignal(store, {
      source,
      signalId: newSignalId(receivedAtMillis),
      receivedAtMillis,
      contentType: request.headers['content-type'],
      body,
      bodyTooLarge: tooLarge,
      signature: {
        signature: header(request, 'x-signature'),
        secret: header(request, 'x-signalgate-secret'),
        querySecret: Object.hasOwn(request.query ?? {}, 'secret'),
      },
      idempotencyKey: header(request, 'idempotency-key'),
    });
    if (answer.replay) reply.header('idempotent-replayed', 'true');
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  });

  const methodNotAllowed = async (_request: FastifyRequest, reply: FastifyReply) => {
    reply.header('allow', 'POST');
    return sendProblem(reply, [{ code: 'METHOD_NOT_ALLOWED', detail: 'send signals with POST' }]);
  };
  app.route({ method: ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'], url: PATH, handler: methodNotAllowed });
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
