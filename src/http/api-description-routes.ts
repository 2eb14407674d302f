import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { openApiDocument, referencePage, REFERENCE_STYLE, type RouteDescription } from '../openapi/index.js';
import type { RouteCatalog } from './route-catalog.js';

const VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;

/** Only the page's own style: no script, no other host, no frames. */
const REFERENCE_CSP = `default-src 'none'; style-src 'sha256-${createHash('sha256').update(REFERENCE_STYLE).digest('base64')}'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'`;

const DOCUMENT_DESCRIPTION: RouteDescription = {
  summary: 'This API description',
  description:
    'The OpenAPI 3.1 document of every route the server answers, built from the schemas its requests are checked with.',
  tag: 'service',
  auth: 'none',
  answers: { 200: { description: 'The OpenAPI document', schema: { type: 'object' } } },
  problems: [],
};

const PAGE_DESCRIPTION: RouteDescription = {
  summary: 'The API reference page',
  description: 'This document as a page to read: static HTML, no script.',
  tag: 'service',
  auth: 'none',
  answers: { 200: { description: 'The reference page', mediaType: 'text/html', schema: { type: 'string' } } },
  problems: [],
};

/**
 * `GET /api/openapi.json` and `GET /api/reference`, without a token: they describe the API,
 * which is public, and hold nothing of any account. Built once, on the first request, when
 * every route is registered.
 */
export function apiDescriptionRoutes(catalog: RouteCatalog) {
  return async (app: FastifyInstance): Promise<void> => {
    let document: Record<string, unknown> | null = null;
    let page: string | null = null;
    const built = (): Record<string, unknown> => (document ??= openApiDocument(catalog.described(), VERSION));

    app.get('/api/openapi.json', { config: { api: DOCUMENT_DESCRIPTION } }, async () => built());
    app.get('/api/reference', { config: { api: PAGE_DESCRIPTION } }, async (_request, reply) => {
      page ??= referencePage(built());
      return reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', REFERENCE_CSP)
        .header('x-content-type-options', 'nosniff')
        .send(page);
    });
  };
}
