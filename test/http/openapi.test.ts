import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RouteCatalog } from '../../src/http/route-catalog.js';
import { startTestServer, TEST_ADMIN_TOKEN, type TestServer } from '../support/start-test-server.js';

type Schema = {
  properties?: Record<string, { examples?: unknown[]; enum?: unknown[]; default?: unknown }>;
  additionalProperties?: unknown;
};
type Operation = {
  security: Array<Record<string, unknown>>;
  parameters?: Array<{
    name: string;
    in: string;
    schema: Schema & { examples?: unknown[]; enum?: unknown[]; default?: unknown };
  }>;
  requestBody?: { content: Record<string, { schema: Schema }> };
};
type Doc = { paths: Record<string, Record<string, Operation>> };

let server: TestServer;
let doc: Doc;
let agentToken: string;
beforeAll(async () => {
  server = await startTestServer();
  const response = await fetch(`${server.url}/api/openapi.json`);
  expect(response.status).toBe(200);
  doc = (await response.json()) as Doc;
  const account = await server.admin('POST', '/api/admin/accounts', { name: 'Docs', monthlySignalQuota: 10 });
  const agent = await server.admin('POST', `/api/admin/accounts/${account.body.id}/agents`, { name: 'docs agent' });
  agentToken = agent.body.token;
});
afterAll(async () => {
  await server?.stop();
});

const operations = (): Array<{ method: string; path: string; op: Operation }> =>
  Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );

/** The operation's path with every `{param}` filled, and the token it needs. */
async function call(method: string, path: string, op: Operation, opts: { body?: unknown; query?: string } = {}) {
  const url = `${server.url}${path.replace(/\{[^}]+\}/g, 'x_not_a_record')}${opts.query ? `?${opts.query}` : ''}`;
  const scheme = Object.keys(op.security[0] ?? {})[0];
  const headers: Record<string, string> = {};
  if (scheme === 'adminToken') headers.authorization = `Bearer ${TEST_ADMIN_TOKEN}`;
  if (scheme === 'agentToken') headers.authorization = `Bearer ${agentToken}`;
  if (opts.body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(url, {
    method,
    headers,
    body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
  });
  const text = await response.text();
  const body = text.startsWith('{') ? JSON.parse(text) : {};
  const problems: Array<{ param?: string; detail: string }> = body.errors ?? (body.code ? [body] : []);
  return { status: response.status, problems };
}

function example(schema: { examples?: unknown[]; enum?: unknown[]; default?: unknown }): unknown {
  return schema.examples?.[0] ?? schema.enum?.[0] ?? schema.default ?? 'x';
}

describe('GET /api/openapi.json', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const result = await new Validator().validate(doc as unknown as Record<string, unknown>);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect((doc as unknown as { openapi: string }).openapi).toBe('3.1.0');
  });

  it('describes every route the server answers, and only those', () => {
    // Routes Fastify has but the document lacks, each with where it was registered.
    expect(server.app.routeCatalog.undescribed()).toEqual([]);
    for (const { method, path } of operations()) {
      const url = path.replace(/\{([^}]+)\}/g, ':$1');
      // POST /api/inbound/{key} and the WebSocket upgrade are answered before the router.
      if (server.app.routeCatalog.isOutsideRouter(method, url)) continue;
      expect(
        server.app.hasRoute({ method: method as 'GET', url }),
        `${method} ${path} is documented but not a route`,
      ).toBe(true);
    }
    const documented = new Set(operations().map(({ method, path }) => `${method} ${path}`));
    for (const expected of [
      'POST /api/inbound/{sourceAuthKey}',
      'POST /api/admin/accounts',
      'GET /api/admin/signals',
      'POST /api/agent/signals/{id}/ack',
      'PUT /api/agent/state',
      'GET /api/openapi.json',
      'GET /healthz',
      'GET /api/agent/ws',
    ]) {
      expect(documented).toContain(expected);
    }
  });

  it('names a route without a description, where it was registered and where to add one', () => {
    const catalog = new RouteCatalog();
    catalog.onRoute({ method: 'GET', url: '/api/admin/widgets', handler: () => undefined });
    catalog.onRoute({ method: 'GET', url: '/metrics', handler: () => undefined });
    const [message, ...rest] = catalog.undescribed();
    expect(rest).toEqual([]);
    expect(message).toMatch(
      /^GET \/api\/admin\/widgets \(registered at .*openapi\.test\.ts:\d+\) has no API description/,
    );
    expect(message).toContain('config: { api:');
    expect(message).toContain('UNDESCRIBED_ROUTES in src/http/route-catalog.ts');
  });

  it('documents the inbound endpoint from the parameter table, in both media types', () => {
    const inbound = doc.paths['/api/inbound/{sourceAuthKey}']!.post!;
    const content = inbound.requestBody!.content;
    expect(Object.keys(content).sort()).toEqual(['application/json', 'text/plain']);
    const json = content['application/json']!.schema as Schema & { patternProperties: Record<string, unknown> };
    expect(Object.keys(json.properties!)).toEqual(
      expect.arrayContaining(['symbol', 'action', 'vol_pctbal_loss', 'sl_pips', 'volumeType', 'exent']),
    );
    expect(Object.keys(json.patternProperties)).toContain('^tp[1-9][0-9]*$');
    expect(inbound.parameters!.map((p) => p.name)).toEqual([
      'sourceAuthKey',
      'X-Signature',
      'X-Signature-Timestamp',
      'X-Signalgate-Secret',
      'Idempotency-Key',
    ]);
    const responses = (inbound as unknown as { responses: Record<string, unknown> }).responses;
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['202', '400', '401', '413', '415', '422', '429']));
  });
});

/**
 * Generated from the document: every field and query parameter it lists is taken (not refused
 * as unknown), and one it does not list is refused. A schema that drifts from its reader fails.
 */
describe('the schemas are the ones requests are checked with', () => {
  it('takes every documented body field and refuses an undocumented one', async () => {
    let checked = 0;
    for (const { method, path, op } of operations()) {
      const schema = op.requestBody?.content['application/json']?.schema;
      if (schema === undefined || path.startsWith('/api/inbound/')) continue;
      for (const [name, field] of Object.entries(schema.properties ?? {})) {
        const answer = await call(method, path, op, { body: { [name]: example(field) } });
        const unknown = answer.problems.filter((p) => p.param === name && /unknown field/.test(p.detail));
        expect(unknown, `${method} ${path} refuses its documented field '${name}'`).toEqual([]);
        checked += 1;
      }
      const extra = await call(method, path, op, { body: { zz_undocumented: 1 } });
      if (schema.additionalProperties === false) {
        expect(extra.status, `${method} ${path} takes the undocumented field 'zz_undocumented'`).toBe(422);
        expect(extra.problems.map((p) => p.param)).toContain('zz_undocumented');
      } else {
        expect(extra.problems.map((p) => p.param)).not.toContain('zz_undocumented');
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('takes every documented query parameter and refuses an undocumented one', async () => {
    let checked = 0;
    for (const { method, path, op } of operations()) {
      // The WebSocket upgrade takes no plain request; its query is not read.
      if (
        op.security.length === 0 ||
        server.app.routeCatalog.isOutsideRouter(method, path.replace(/\{([^}]+)\}/g, ':$1'))
      )
        continue;
      const query = (op.parameters ?? []).filter((p) => p.in === 'query');
      for (const parameter of query) {
        const answer = await call(method, path, op, {
          query: `${parameter.name}=${encodeURIComponent(String(example(parameter.schema)))}`,
        });
        const unknown = answer.problems.filter(
          (p) => p.param === parameter.name && /unknown query parameter/.test(p.detail),
        );
        expect(unknown, `${method} ${path} refuses its documented query parameter '${parameter.name}'`).toEqual([]);
        checked += 1;
      }
      if (method !== 'GET') continue;
      const extra = await call(method, path, op, { query: 'zz_undocumented=1' });
      expect(extra.status, `${method} ${path} takes the undocumented query parameter`).toBe(400);
      expect(extra.problems.map((p) => p.param)).toContain('zz_undocumented');
    }
    expect(checked).toBeGreaterThanOrEqual(5);
  });
});

describe('GET /api/reference', () => {
  it('is a static page of every operation, allowed no script and nothing from elsewhere', async () => {
    const response = await fetch(`${server.url}/api/reference`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).not.toMatch(/script-src|unsafe-inline/);
    const html = await response.text();
    expect(html).not.toMatch(/<script|https?:\/\//);
    for (const { method, path } of operations()) {
      expect(html).toContain(`${method}</span>${path.replace(/&/g, '&#38;')}`);
    }
  });
});
