import { ERROR_CATALOG, ErrorCode } from '../errors/catalog.js';
import type { JsonSchema } from './json-schema.js';
import type { RouteDescription, RouteTag } from './route-description.js';

/** One operation the server answers: a method, a Fastify-style path (`:id`) and its description. */
export interface DescribedRoute {
  method: string;
  url: string;
  api: RouteDescription;
}

const TAGS: Record<RouteTag, string> = {
  inbound: 'Signals sent by TradingView and other senders, authenticated by the key in the URL.',
  admin: 'Accounts, agents, sources and the signal log, behind the admin token.',
  agent:
    "What executing agents call, with their agent token (the WebSocket transport is described in the agents' guide).",
  service: 'The API description itself and the service state.',
};

const PROBLEM_SCHEMA: JsonSchema = {
  type: 'object',
  description:
    'An RFC 9457 problem: the first problem speaks for the answer; errors lists every one when there are several.',
  properties: {
    type: { type: 'string', examples: [`urn:signalgate:problem:${ErrorCode.INVALID_FIELD}`] },
    title: { type: 'string' },
    status: { type: 'integer' },
    code: { type: 'string', enum: Object.keys(ERROR_CATALOG) },
    detail: { type: 'string', description: 'what is wrong and what to do' },
    param: { type: 'string', description: 'the field, parameter or header at fault' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        properties: { code: { type: 'string' }, detail: { type: 'string' }, param: { type: 'string' } },
        required: ['code', 'detail'],
      },
    },
  },
  required: ['type', 'title', 'status', 'code', 'detail'],
};

/** `:id` → `{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The OpenAPI 3.1 document of the given routes, in the order given. */
export function openApiDocument(routes: readonly DescribedRoute[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const path = openApiPath(route.url);
    (paths[path] ??= {})[route.method.toLowerCase()] = operation(route, path);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'signalgate',
      version,
      description:
        'Inbound trading signals: receive, meter, store and deliver to executing agents. Every error answer is an application/problem+json body.',
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      securitySchemes: {
        adminToken: { type: 'http', scheme: 'bearer', description: 'the admin token (SIGNALGATE_ADMIN_TOKEN)' },
        agentToken: {
          type: 'http',
          scheme: 'bearer',
          description: "an agent's token, shown once when the agent is created",
        },
      },
      schemas: { Problem: PROBLEM_SCHEMA },
    },
  };
}

function operation(route: DescribedRoute, path: string): Record<string, unknown> {
  const { api } = route;
  const parameters: unknown[] = [];
  for (const name of path.match(/\{[^}]+\}/g) ?? []) {
    const bare = name.slice(1, -1);
    parameters.push({ name: bare, in: 'path', required: true, schema: api.params?.[bare] ?? { type: 'string' } });
  }
  for (const [name, schema] of Object.entries(api.query?.properties ?? {})) {
    parameters.push({
      name,
      in: 'query',
      required: api.query?.required?.includes(name) ?? false,
      description: schema.description,
      schema,
    });
  }
  for (const [name, header] of Object.entries(api.headers ?? {})) {
    parameters.push({ name, in: 'header', required: false, description: header.description, schema: header.schema });
  }
  const op: Record<string, unknown> = {
    operationId: `${route.method.toLowerCase()}${path.replace(/[^A-Za-z0-9]+(.)?/g, (_m, next: string | undefined) => (next ?? '').toUpperCase())}`,
    summary: api.summary,
    ...(api.description === undefined ? {} : { description: api.description }),
    tags: [api.tag],
    security: api.auth === 'admin' ? [{ adminToken: [] }] : api.auth === 'agent' ? [{ agentToken: [] }] : [],
    ...(parameters.length > 0 ? { parameters } : {}),
  };
  if (api.body !== undefined) {
    const media = api.body.mediaTypes ?? { 'application/json': api.body.schema };
    op.requestBody = {
      required: api.body.required,
      content: Object.fromEntries(Object.entries(media).map(([type, schema]) => [type, { schema }])),
    };
  }
  op.responses = { ...successes(api), ...problems(api.problems) };
  return op;
}

function successes(api: RouteDescription): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(api.answers).map(([status, answer]) => [
      status,
      {
        description: answer.description,
        ...(answer.headers === undefined
          ? {}
          : {
              headers: Object.fromEntries(
                Object.entries(answer.headers).map(([name, h]) => [
                  name,
                  { description: h.description, schema: h.schema },
                ]),
              ),
            }),
        ...(answer.schema === undefined
          ? {}
          : { content: { [answer.mediaType ?? 'application/json']: { schema: answer.schema } } }),
      },
    ]),
  );
}

/** The problem answers, one per status, listing the codes that come with it. */
function problems(codes: readonly ErrorCode[]): Record<string, unknown> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CATALOG[code].status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, list]) => [
      String(status),
      {
        description: list.map((code) => `${code}: ${ERROR_CATALOG[code].title}`).join('; '),
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      },
    ]),
  );
}
