/**
 * The API reference as one static HTML page rendered from the OpenAPI document: no script and
 * nothing from another host, so it works offline and under a CSP that allows only its own
 * style (whose hash the server sends). Each operation lists its parameters, body fields and
 * answers; the full schemas are in /api/openapi.json.
 */
export const REFERENCE_STYLE =
  'body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#222}' +
  'h2{border-bottom:1px solid #ccc;margin-top:2.5rem}section{margin:1.5rem 0}' +
  'h3{font:600 1rem ui-monospace,monospace;margin:0}.m{display:inline-block;min-width:4.5rem}' +
  'table{border-collapse:collapse;margin:.4rem 0}td,th{border:1px solid #ddd;padding:.2rem .5rem;text-align:left;vertical-align:top}' +
  'code{font-family:ui-monospace,monospace}';

type Doc = {
  info: { title: string; version: string; description?: string };
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, Operation>>;
};
type Schema = {
  type?: unknown;
  description?: string;
  properties?: Record<string, Schema>;
  required?: string[];
  enum?: unknown[];
};
type Operation = {
  summary: string;
  description?: string;
  tags: string[];
  security: Array<Record<string, unknown>>;
  parameters?: Array<{ name: string; in: string; required: boolean; description?: string; schema: Schema }>;
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { description: string }>;
};

export function referencePage(document: Record<string, unknown>): string {
  const doc = document as unknown as Doc;
  const sections = doc.tags.map((tag) => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item)
        .filter(([, op]) => op.tags.includes(tag.name))
        .map(([method, op]) => operationHtml(method, path, op)),
    );
    return operations.length === 0
      ? ''
      : `<h2 id="${esc(tag.name)}">${esc(tag.name)}</h2><p>${esc(tag.description)}</p>${operations.join('')}`;
  });
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">` +
    `<title>${esc(doc.info.title)} API reference</title><style>${REFERENCE_STYLE}</style></head><body>` +
    `<h1>${esc(doc.info.title)} API reference <small>${esc(doc.info.version)}</small></h1>` +
    `<p>${esc(doc.info.description ?? '')} The machine-readable description: <a href="/api/openapi.json">/api/openapi.json</a> (OpenAPI 3.1).</p>` +
    `${sections.join('')}</body></html>`
  );
}

function operationHtml(method: string, path: string, op: Operation): string {
  const auth = op.security.length === 0 ? 'no token' : `Authorization: Bearer ${Object.keys(op.security[0]!).join('')}`;
  const params = (op.parameters ?? []).map((p) => [
    `${p.name} (${p.in})`,
    p.required ? 'required' : '',
    describe(p.schema, p.description),
  ]);
  const bodies = Object.entries(op.requestBody?.content ?? {}).map(([type, { schema }]) => {
    const fields = Object.entries(schema.properties ?? {}).map(([name, field]) => [
      name,
      schema.required?.includes(name) ? 'required' : '',
      describe(field),
    ]);
    return `<p>Body <code>${esc(type)}</code>: ${esc(schema.description ?? '')}</p>${table(['field', '', ''], fields)}`;
  });
  const answers = Object.entries(op.responses).map(([status, r]) => [status, '', r.description]);
  return (
    `<section><h3><span class="m">${esc(method.toUpperCase())}</span>${esc(path)}</h3><p>${esc(op.summary)}. ${esc(op.description ?? '')} <em>${esc(auth)}</em></p>` +
    `${table(['parameter', '', ''], params)}${bodies.join('')}${table(['answer', '', ''], answers)}</section>`
  );
}

function describe(schema: Schema, description?: string): string {
  const type = Array.isArray(schema.type)
    ? schema.type.join(' or ')
    : typeof schema.type === 'string'
      ? schema.type
      : '';
  const choices = schema.enum ? `one of ${schema.enum.join(', ')}` : '';
  return [type, choices, description ?? schema.description ?? ''].filter((part) => part !== '').join('; ');
}

function table(head: string[], rows: string[][]): string {
  if (rows.length === 0) return '';
  const cells = (row: string[], tag: string) =>
    `<tr>${row.map((cell) => `<${tag}>${esc(cell)}</${tag}>`).join('')}</tr>`;
  return `<table>${cells(head, 'th')}${rows.map((row) => cells(row, 'td')).join('')}</table>`;
}

function esc(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
