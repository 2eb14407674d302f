import type { FastifyInstance } from 'fastify';
import { readJsonObject } from '../language/strict-json-reader.js';

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
      const repeated = repeatedTopLevelKey(parsed, text);
      if (repeated === null) return done(null, parsed);
      done(Object.assign(new Error(`'${repeated}' is given more than once; send each field once`), { statusCode: 400 }), undefined);
    });
  });
}

function repeatedTopLevelKey(parsed: unknown, text: string): string | null {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return null;
  const reading = readJsonObject(text);
  if (!reading.ok) return null;
  const seen = new Set<string>();
  for (const { key } of reading.members) {
    if (seen.has(key)) return key;
    seen.add(key);
  }
  return null;
}
