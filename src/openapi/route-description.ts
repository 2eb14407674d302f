import type { ErrorCode } from '../errors/catalog.js';
import type { JsonSchema, ObjectSchema } from './json-schema.js';

/** Who may call a route: the admin token, an agent's token, or anyone (the key is in the path). */
export type RouteAuth = 'admin' | 'agent' | 'none';

/** The part of the API a route belongs to; each is a section of the document and the page. */
export type RouteTag = 'admin' | 'agent' | 'inbound' | 'service';

export interface AnswerDescription {
  description: string;
  /** The body's schema; the media type is `application/json` unless `mediaType` says otherwise. */
  schema?: JsonSchema;
  mediaType?: string;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
}

/**
 * What the API description says about one route, declared once beside the route and given to
 * Fastify as `config: { api: ... }`. Its `body` and `query` schemas are the ones the route's
 * reader checks requests with (see FieldReader), so the document cannot describe fields the
 * server does not take, nor miss one it does.
 */
export interface RouteDescription {
  summary: string;
  description?: string;
  tag: RouteTag;
  auth: RouteAuth;
  /** The path's `:name` parameters. */
  params?: Record<string, JsonSchema>;
  query?: ObjectSchema;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
  /** The request body by media type (`application/json` for a plain schema). */
  body?: { schema: ObjectSchema | JsonSchema; required: boolean; mediaTypes?: Record<string, JsonSchema> };
  /** The successful answers by status. */
  answers: Record<number, AnswerDescription>;
  /** The error codes the route may answer with (their statuses come from the catalog). */
  problems: readonly ErrorCode[];
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route's entry in GET /api/openapi.json (src/openapi/route-description.ts). */
    api?: RouteDescription;
  }
}
