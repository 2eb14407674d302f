import { ErrorCode, type Problem } from '../errors/catalog.js';
import { allowedIpsProblems, MAX_ALLOWED_IPS, TRADINGVIEW } from '../security/allowed-ips.js';
import { newAuthKey, newId } from '../security/random-secrets.js';
import type { SourcePatch, Store } from '../store/store.js';
import { storedAuthKey } from '../store/auth-key-hash.js';
import { type AdminResult, notFound, refuse } from './admin-result.js';
import { FieldReader } from './field-reader.js';
import { booleanField, idListField, textField, wholeNumberField } from './field-schemas.js';
import { type JsonSchema, objectSchema } from '../openapi/index.js';
import { type ListQuery, readListQuery, unknownCursor } from './list-query.js';
import { sourceView } from './views.js';

export const DEFAULT_MAX_SIGNAL_AGE_SECONDS = 120;
const MAX_AGE_LIMIT = 86_400;
const SECRET_MAX = 1024;
const MAX_ROUTED_AGENTS = 100;
/** The longest duplicate window: an hour; a repeat later than that is a new signal. */
export const MAX_DUPLICATE_WINDOW_SECONDS = 3600;

type SourceAnswer = AdminResult<ReturnType<typeof sourceView>>;

const HMAC_SECRET: JsonSchema = {
  type: ['string', 'null'],
  description:
    'the shared secret of X-Signature / X-Signalgate-Secret; null clears it. Printable ASCII without spaces at either end.',
  minLength: 1,
  maxLength: SECRET_MAX,
  pattern: '^[\\x21-\\x7e](?:[\\x20-\\x7e]*[\\x21-\\x7e])?$',
  examples: ['s3cret-shared-with-tradingview'],
};
const SOURCE_NAME = textField(200, 'what the source is called, e.g. the strategy', 'EURUSD breakout');
const AGENT_IDS = idListField(
  MAX_ROUTED_AGENTS,
  "the account's agents that receive its signals; empty means every agent of the account",
  'agt_0123',
);
const ALLOWED_IPS: JsonSchema = {
  type: 'array',
  description: `addresses allowed to send: IPv4/IPv6 addresses, CIDR ranges or '${TRADINGVIEW}' (its published addresses); empty allows any`,
  items: { type: 'string', minLength: 1 },
  maxItems: MAX_ALLOWED_IPS,
  examples: [[TRADINGVIEW, '203.0.113.0/24']],
};
const DUPLICATE_WINDOW = wholeNumberField(
  0,
  MAX_DUPLICATE_WINDOW_SECONDS,
  "seconds within which an entry (an opening action) with the same raw body as the source's previous accepted signal is answered as that signal, neither charged nor delivered twice; closes, cancels and position targets are never held back (0, the default, is off)",
  60,
);
const MAX_AGE = wholeNumberField(
  1,
  MAX_AGE_LIMIT,
  `seconds a signal may wait for delivery before it expires (default ${DEFAULT_MAX_SIGNAL_AGE_SECONDS})`,
  120,
);

/** The body of `POST /api/admin/sources`. */
export const CREATE_SOURCE_BODY = objectSchema(
  {
    accountId: textField(100, 'the account the source sends for', 'acc_0123'),
    name: SOURCE_NAME,
    hmacSecret: HMAC_SECRET,
    agentIds: AGENT_IDS,
    maxSignalAgeSeconds: MAX_AGE,
    duplicateWindowSeconds: DUPLICATE_WINDOW,
    allowedIps: ALLOWED_IPS,
  },
  ['accountId', 'name'],
);

/** The body of `PATCH /api/admin/sources/{id}`: any of the fields, at least one. */
export const UPDATE_SOURCE_BODY = objectSchema(
  {
    name: SOURCE_NAME,
    active: booleanField(`false refuses its signals (401 ${ErrorCode.SOURCE_INACTIVE}) until set true again`),
    hmacSecret: HMAC_SECRET,
    agentIds: AGENT_IDS,
    maxSignalAgeSeconds: MAX_AGE,
    duplicateWindowSeconds: DUPLICATE_WINDOW,
    allowedIps: ALLOWED_IPS,
  },
  [],
  'at least one field',
);

/** `rotate-key` takes no fields: an empty body, or `{}`. */
export const ROTATE_KEY_BODY = objectSchema({}, [], 'no fields: send no body, or {}');

/**
 * A secret also travels as the `X-Signalgate-Secret` header, where HTTP trims spaces at the
 * ends and bytes beyond ASCII do not arrive as UTF-8: such a secret could never match there.
 */
function readHmacSecret(fields: FieldReader): string | null | undefined {
  const secret = fields.string('hmacSecret');
  if (typeof secret === 'string' && (!/^[\x20-\x7e]+$/.test(secret) || secret.trim() !== secret)) {
    fields.fail(
      'hmacSecret',
      "'hmacSecret' must be printable ASCII without spaces at either end, so that it also works as the X-Signalgate-Secret header",
    );
    return undefined;
  }
  return secret;
}

/**
 * `allowedIps`: a list of addresses, CIDR ranges and the word `tradingview`, each checked, every
 * bad entry named; kept as written.
 */
function readAllowedIps(fields: FieldReader): string[] | undefined {
  const value = fields.given('allowedIps');
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every((entry): entry is string => typeof entry === 'string')) {
    fields.fail(
      'allowedIps',
      `'allowedIps' must be a list of at most ${MAX_ALLOWED_IPS} strings: IPv4/IPv6 addresses, CIDR ranges or '${TRADINGVIEW}' ([] allows any address)`,
    );
    return undefined;
  }
  const problems = allowedIpsProblems(value);
  for (const problem of problems) fields.fail('allowedIps', `'allowedIps': ${problem}`);
  return problems.length === 0 ? value : undefined;
}

export async function createSource(
  store: Store,
  body: unknown,
  nowMillis: number,
  publicUrl: string,
): Promise<SourceAnswer> {
  const fields = new FieldReader(body, CREATE_SOURCE_BODY);
  const accountId = fields.string('accountId');
  const name = fields.string('name');
  const hmacSecret = readHmacSecret(fields);
  const agentIds = fields.stringList('agentIds');
  const maxAge = fields.integer('maxSignalAgeSeconds');
  const duplicateWindow = fields.integer('duplicateWindowSeconds');
  const allowedIps = readAllowedIps(fields);
  fields.rejectUnknown();
  if (fields.problems.length > 0 || typeof accountId !== 'string' || typeof name !== 'string')
    return refuse(...fields.problems);
  if ((await store.accounts.get(accountId)) === null) {
    return refuse({ code: ErrorCode.INVALID_FIELD, param: 'accountId', detail: `no account with id '${accountId}'` });
  }
  const agentProblems = await checkAgents(store, accountId, agentIds ?? []);
  if (agentProblems.length > 0) return refuse(...agentProblems);
  const authKey = newAuthKey();
  const source = {
    id: newId('src'),
    accountId,
    name: name.trim(),
    ...storedAuthKey(authKey),
    active: true,
    hmacSecret: hmacSecret ?? null,
    agentIds: agentIds ?? [],
    maxSignalAgeSeconds: maxAge ?? DEFAULT_MAX_SIGNAL_AGE_SECONDS,
    duplicateWindowSeconds: duplicateWindow ?? 0,
    allowedIps: allowedIps ?? [],
    createdAt: new Date(nowMillis).toISOString(),
    revision: 0,
  };
  await store.sources.create(source);
  return { ok: true, value: sourceView(source, publicUrl, authKey) };
}

export async function showSource(store: Store, id: string, publicUrl: string): Promise<SourceAnswer> {
  const source = await store.sources.get(id);
  return source === null ? notFound('source', id) : { ok: true, value: sourceView(source, publicUrl) };
}

export async function updateSource(
  store: Store,
  id: string,
  body: unknown,
  nowMillis: number,
  publicUrl: string,
): Promise<SourceAnswer> {
  const fields = new FieldReader(body, UPDATE_SOURCE_BODY);
  const patch: SourcePatch = {};
  const name = fields.string('name');
  if (typeof name === 'string') patch.name = name.trim();
  const active = fields.boolean('active');
  if (active !== undefined) patch.active = active;
  const secret = readHmacSecret(fields);
  if (secret !== undefined) patch.hmacSecret = secret;
  const agentIds = fields.stringList('agentIds');
  if (agentIds !== undefined) patch.agentIds = agentIds;
  const maxAge = fields.integer('maxSignalAgeSeconds');
  if (maxAge !== undefined) patch.maxSignalAgeSeconds = maxAge;
  const duplicateWindow = fields.integer('duplicateWindowSeconds');
  if (duplicateWindow !== undefined) patch.duplicateWindowSeconds = duplicateWindow;
  const allowedIps = readAllowedIps(fields);
  if (allowedIps !== undefined) patch.allowedIps = allowedIps;
  fields.rejectUnknown();
  if (fields.problems.length > 0) return refuse(...fields.problems);
  if (Object.keys(patch).length === 0) {
    return refuse({
      code: ErrorCode.INVALID_REQUEST,
      detail:
        'the update changes nothing; send one or more of name, active, hmacSecret, agentIds, maxSignalAgeSeconds, allowedIps and duplicateWindowSeconds',
    });
  }
  const current = await store.sources.get(id);
  if (current === null) return notFound('source', id);
  if (patch.agentIds !== undefined) {
    const agentProblems = await checkAgents(store, current.accountId, patch.agentIds);
    if (agentProblems.length > 0) return refuse(...agentProblems);
  }
  const updated = await store.sources.update(id, patch, new Date(nowMillis).toISOString());
  return updated === null ? notFound('source', id) : { ok: true, value: sourceView(updated, publicUrl) };
}

/**
 * Gives the source a new auth key; the old one stops working with this commit. It takes no
 * fields: the body is empty (or `{}`), and any field in it is refused rather than ignored.
 */
export async function rotateSourceKey(
  store: Store,
  id: string,
  body: unknown,
  nowMillis: number,
  publicUrl: string,
): Promise<SourceAnswer> {
  if (body !== undefined && body !== '') {
    const fields = new FieldReader(body, ROTATE_KEY_BODY);
    if (fields.problems.length > 0) return refuse(...fields.problems);
    const names = Object.keys(body as object);
    if (names.length > 0) {
      return refuse(
        ...names.map((name): Problem => ({
          code: ErrorCode.INVALID_FIELD,
          param: name,
          detail: `unknown field '${name}'; rotate-key takes no fields, send an empty body`,
        })),
      );
    }
  }
  const authKey = newAuthKey();
  const updated = await store.sources.update(id, { authKey }, new Date(nowMillis).toISOString());
  return updated === null ? notFound('source', id) : { ok: true, value: sourceView(updated, publicUrl, authKey) };
}

async function checkAgents(store: Store, accountId: string, agentIds: string[]): Promise<Problem[]> {
  const problems: Problem[] = [];
  for (const agentId of agentIds) {
    const agent = await store.agents.get(agentId);
    if (agent === null || agent.accountId !== accountId) {
      problems.push({
        code: ErrorCode.INVALID_FIELD,
        param: 'agentIds',
        detail: `no agent '${agentId}' in account '${accountId}'`,
      });
    }
  }
  return problems;
}

/** `GET /api/admin/sources[?accountId=]`: a page of sources, newest first. */
export async function listSources(store: Store, query: ListQuery, publicUrl: string) {
  const read = readListQuery(query, ['accountId']);
  if (!read.ok) return read;
  const { limit, before, accountId } = read.value;
  const problems: Problem[] = [];
  if (accountId !== undefined && (await store.accounts.get(accountId)) === null) {
    problems.push({ code: ErrorCode.NOT_FOUND, param: 'accountId', detail: `no account with id '${accountId}'` });
  }
  if (before !== undefined && (await store.sources.get(before)) === null)
    problems.push(unknownCursor('source', before));
  if (problems.length > 0) return refuse<never>(...problems);
  const page = await store.sources.list({
    limit,
    ...(before !== undefined && { before }),
    ...(accountId !== undefined && { accountId }),
  });
  return {
    ok: true as const,
    value: { sources: page.items.map((source) => sourceView(source, publicUrl)), next: page.next },
  };
}

/**
 * `DELETE /api/admin/sources/{id}`: the source, its key, its signal log and the deliveries of its
 * signals go in one commit; a delivery still queued is never handed out. Deactivating instead
 * keeps the log.
 */
export async function deleteSource(store: Store, id: string): Promise<AdminResult<null>> {
  return (await store.sources.delete(id)) ? { ok: true, value: null } : notFound('source', id);
}
