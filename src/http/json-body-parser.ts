import type { FastifyInstance } from 'fastify';
import { repeatedJsonKey, repeatedKeyDetail } from './repeated-json-key.js';

/**
 * JSON request bodies as Fastify reads them (prototype-poisoning keys refused), except that a
 * top-level key given twice is refused too: `JSON.parse` keeps the last one silently, so
 * `{"monthlySignalQuota":10,"monthlySignalQuota":1000}` or an ack naming two statuses would pass
 * as whichever came last. With `emptyIsNoBody`, an empty body reads as no body at all (for a
 * route that takes none), rather than being refused.
 */
export function useStrictJsonBodies(app: FastifyInstance, opts: { emptyIsNoBody?: boolean } = {}): void {
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body.toString();
    if (opts.emptyIsNoBody && text.length === 0) return done(null, undefined);
    json(req, text, (error, parsed) => {
      if (error) return done(error, undefined);
      const repeated = repeatedJsonKey(text);
      if (repeated === null) return done(null, parsed);
      done(Object.assign(new Error(repeatedKeyDetail(repeated)), { statusCode: 400 }), undefined);
    });
  });
}
