import type { FastifyInstance } from 'fastify';
import { type Problem, statusOf } from '../errors/catalog.js';
import { jsonBodyProblem } from '../http-kit/json-body-limits.js';
import { repeatedJsonKey, repeatedKeyDetail } from '../http-kit/repeated-json-key.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** A body refused before it was parsed; the error handler answers with its problem as it is. */
export class RefusedBody extends Error {
  readonly statusCode: number;

  constructor(readonly problem: Problem) {
    super(problem.detail);
    this.statusCode = statusOf(problem.code);
  }
}

/**
 * JSON request bodies as Fastify reads them (prototype-poisoning keys refused), except that a
 * top-level key given twice is refused too: `JSON.parse` keeps the last one silently, so
 * `{"monthlySignalQuota":10,"monthlySignalQuota":1000}` or an ack naming two statuses would pass
 * as whichever came last. A body that is not valid UTF-8 is refused, as on the inbound endpoint,
 * and so is one nested too deep or holding too many values (`jsonBodyProblem`), before it is
 * parsed. With `emptyIsNoBody`, an empty body reads as no body at all (for a route that takes
 * none), rather than being refused.
 */
export function useStrictJsonBodies(app: FastifyInstance, opts: { emptyIsNoBody?: boolean } = {}): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (req, body, done) => {
    const bytes = body as Buffer;
    let text: string;
    try {
      text = utf8.decode(bytes);
    } catch {
      // Decoded leniently, each bad byte would be stored as U+FFFD: a name or secret the sender never wrote.
      return done(
        Object.assign(new Error('the body is not valid UTF-8; send JSON encoded as UTF-8'), { statusCode: 400 }),
        undefined,
      );
    }
    if (opts.emptyIsNoBody && text.length === 0) return done(null, undefined);
    const tooBig = jsonBodyProblem(text, bytes.length, 'body');
    if (tooBig !== null) return done(new RefusedBody(tooBig), undefined);
    json(req, text, (error, parsed) => {
      if (error) return done(error, undefined);
      const repeated = repeatedJsonKey(text, undefined, parsed);
      if (repeated === null) return done(null, parsed);
      done(Object.assign(new Error(repeatedKeyDetail(repeated)), { statusCode: 400 }), undefined);
    });
  });
}
