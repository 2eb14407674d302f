import { ErrorCode } from '../errors/catalog.js';
import { objectSchema, type JsonSchema, type ObjectSchema } from '../openapi/index.js';
import { readRiskRules } from '../risk/read-risk-rules.js';
import type { EffectiveRiskRules, RiskRules } from '../risk/risk-rules.js';
import { newId } from '../security/random-secrets.js';
import type { Halt, HaltScope, RiskAuditEntry, RiskRulesScope, StoredRiskRules } from '../store/risk.js';
import type { Store } from '../store/store.js';
import { type AdminResult, notFound, refuse } from './admin-result.js';
import { FieldReader } from './field-reader.js';
import { booleanField, textField } from './field-schemas.js';
import { type ListQuery, readListQuery } from './list-query.js';

const POSITIVE = (description: string, example: number): JsonSchema => ({
  type: ['number', 'null'],
  description,
  examples: [example],
});
const COUNT = (description: string, example: number): JsonSchema => ({
  type: ['integer', 'null'],
  minimum: 0,
  description,
  examples: [example],
});
const LOSS: JsonSchema = {
  type: ['object', 'null'],
  description: 'amount (account currency) or percent or both; the tighter holds',
  properties: { amount: { type: ['number', 'null'] }, percent: { type: ['number', 'null'], maximum: 100 } },
  additionalProperties: false,
  examples: [{ percent: 5 }],
};
const SYMBOLS = (description: string, example: string): JsonSchema => ({
  type: ['array', 'null'],
  description,
  items: { type: 'string', minLength: 1 },
  maxItems: 500,
  examples: [[example]],
});

/**
 * The body of `PUT …/risk-rules`: the whole set (what is absent or null has no limit). A
 * source's rules only tighten its account's: a signal carries the smaller of each limit, every
 * trading window, the intersection of the allowed symbols and the union of the refused
 * (`narrowRiskRules`), so a source's larger limit is set but never holds. docs/risk.md.
 */
export const RISK_RULES_BODY: ObjectSchema = objectSchema(
  {
    maxLotsPerOrder: POSITIVE('the largest order, in lots', 1),
    maxNotionalPerOrder: POSITIVE("the largest order's notional, in the account currency", 100000),
    maxPositionLots: POSITIVE('the largest position per symbol after the order, in lots', 2),
    maxOpenPositions: COUNT('the most positions open at once, the new entry counted', 5),
    maxEntriesPerDay: COUNT('the most entries per day (the day of dayTimeZone)', 20),
    maxDailyLoss: {
      ...LOSS,
      description: `the largest loss in one day, realized plus unrealized: ${LOSS.description}; reaching it halts the account`,
    },
    maxTotalLoss: {
      type: ['object', 'null'],
      description:
        'the largest loss from startingBalance (prop-firm drawdown): amount or percent of startingBalance; reaching it halts the account',
      properties: {
        amount: { type: ['number', 'null'] },
        percent: { type: ['number', 'null'], maximum: 100 },
        startingBalance: { type: 'number' },
      },
      required: ['startingBalance'],
      additionalProperties: false,
      examples: [{ percent: 10, startingBalance: 100000 }],
    },
    dayTimeZone: {
      type: ['string', 'null'],
      description: 'IANA time zone whose midnight starts a day; UTC when absent',
      examples: ['Europe/London'],
    },
    tradingWindow: {
      type: ['object', 'null'],
      description: 'when entries may be opened',
      properties: {
        timeZone: { type: 'string' },
        days: { type: 'array', items: { type: 'string', enum: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] } },
        from: { type: 'string', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' },
        until: { type: 'string', pattern: '^([01]\\d|2[0-3]):[0-5]\\d$' },
      },
      required: ['timeZone', 'days', 'from', 'until'],
      additionalProperties: false,
      examples: [
        { timeZone: 'Europe/London', days: ['mon', 'tue', 'wed', 'thu', 'fri'], from: '07:00', until: '21:00' },
      ],
    },
    allowedSymbols: SYMBOLS('only these symbols may be entered', 'EURUSD'),
    refusedSymbols: SYMBOLS('these symbols may never be entered', 'BTCUSD'),
  },
  [],
  "the risk rules (absent or null: no such limit); a source's only tighten its account's",
);

/** The body of `POST …/halt`. */
export const HALT_BODY = objectSchema(
  {
    reason: textField(500, 'why: shown in the halts, the audit log and a flatten', 'strategy misfiring'),
    flatten: booleanField("also close every position and cancel every pending order of the account's agents"),
  },
  ['reason'],
);

/** The body of `POST …/release`: nothing, or {}. */
export const RELEASE_BODY = objectSchema({}, [], 'no fields: send no body, or {}');

const RULES_FIELDS = {
  rules: { type: ['object', 'null'], description: 'the rules set here; null: none' },
  effective: {
    type: ['object', 'null'],
    description: "what a signal carries to the agents: the account's rules narrowed by the source's; null: none",
  },
  updatedAt: { type: ['string', 'null'], format: 'date-time' },
} satisfies Record<string, JsonSchema>;

export const SOURCE_RULES_VIEW = objectSchema(
  { sourceId: { type: 'string' }, accountId: { type: 'string' }, ...RULES_FIELDS },
  ['sourceId', 'accountId', 'rules', 'effective', 'updatedAt'],
);
export const ACCOUNT_RULES_VIEW = objectSchema(
  {
    accountId: { type: 'string' },
    ...RULES_FIELDS,
    sources: { type: 'array', items: SOURCE_RULES_VIEW, description: 'its sources that have rules of their own' },
  },
  ['accountId', 'rules', 'effective', 'updatedAt', 'sources'],
);
export const HALT_VIEW = objectSchema(
  {
    id: { type: 'string' },
    scope: { type: 'string', enum: ['account', 'source', 'agent'] },
    targetId: { type: 'string' },
    accountId: { type: 'string' },
    reason: { type: 'string' },
    flatten: { type: 'boolean' },
    haltedBy: { type: 'string', description: 'admin token, dashboard session …, or agent agt_…' },
    haltedAt: { type: 'string', format: 'date-time' },
    releasedBy: { type: ['string', 'null'] },
    releasedAt: { type: ['string', 'null'], format: 'date-time' },
  },
  ['id', 'scope', 'targetId', 'accountId', 'reason', 'flatten', 'haltedBy', 'haltedAt', 'releasedBy', 'releasedAt'],
);
export const HALT_ANSWER = objectSchema(
  {
    halt: HALT_VIEW,
    alreadyHalted: { type: 'boolean', description: 'it was halted before: the halt in force, unchanged' },
    flattens: {
      type: 'array',
      description: 'the flatten queued: its signal log entry and the agents it went to',
      items: objectSchema({ signalId: { type: 'string' }, agentIds: { type: 'array', items: { type: 'string' } } }),
    },
  },
  ['halt', 'alreadyHalted', 'flattens'],
);
export const AUDIT_VIEW = objectSchema(
  {
    entries: {
      type: 'array',
      items: {
        type: 'object',
        description:
          'id, at, actor (admin token, dashboard session …, agent agt_…), action (rules_set, rules_deleted, halted, released, flatten_queued), scope, targetId, accountId, before, after',
      },
    },
    next: { type: ['string', 'null'], description: 'pass as before for the following page' },
  },
  ['entries', 'next'],
);

type SourceRulesView = {
  sourceId: string;
  accountId: string;
  rules: RiskRules | null;
  effective: EffectiveRiskRules | null;
  updatedAt: string | null;
};
type AccountRulesView = {
  accountId: string;
  rules: RiskRules | null;
  effective: EffectiveRiskRules | null;
  updatedAt: string | null;
  sources: SourceRulesView[];
};

function sourceView(
  sourceId: string,
  accountId: string,
  own: StoredRiskRules | null,
  account: StoredRiskRules | null,
): SourceRulesView {
  return {
    sourceId,
    accountId,
    rules: own?.rules ?? null,
    effective: own?.effective ?? account?.effective ?? null,
    updatedAt: own?.updatedAt ?? null,
  };
}

async function accountRules(store: Store, accountId: string): Promise<AccountRulesView> {
  const all = await store.risk.listRules(accountId);
  const account = all.find((rules) => rules.scope === 'account') ?? null;
  return {
    accountId,
    rules: account?.rules ?? null,
    effective: account?.effective ?? null,
    updatedAt: account?.updatedAt ?? null,
    sources: all
      .filter((rules) => rules.scope === 'source')
      .map((rules) => sourceView(rules.id, accountId, rules, account)),
  };
}

async function sourceRules(store: Store, sourceId: string, accountId: string): Promise<SourceRulesView> {
  const [own, account] = await Promise.all([
    store.risk.getRules('source', sourceId),
    store.risk.getRules('account', accountId),
  ]);
  return sourceView(sourceId, accountId, own, account);
}

/** The account a target belongs to, or null when there is no such account, source or agent. */
async function accountOf(store: Store, scope: HaltScope, id: string): Promise<string | null> {
  if (scope === 'account') return (await store.accounts.get(id))?.id ?? null;
  if (scope === 'source') return (await store.sources.get(id))?.accountId ?? null;
  return (await store.agents.get(id))?.accountId ?? null;
}

export async function showRiskRules(
  store: Store,
  scope: RiskRulesScope,
  id: string,
): Promise<AdminResult<AccountRulesView | SourceRulesView>> {
  const accountId = await accountOf(store, scope, id);
  if (accountId === null) return notFound(scope, id);
  return {
    ok: true,
    value: scope === 'account' ? await accountRules(store, id) : await sourceRules(store, id, accountId),
  };
}

/** Replaces the rules of an account or a source (validated first, then audited as `actor`). */
export async function putRiskRules(
  store: Store,
  scope: RiskRulesScope,
  id: string,
  body: unknown,
  actor: string,
  nowMillis: number,
): Promise<AdminResult<AccountRulesView | SourceRulesView>> {
  const read = readRiskRules(body);
  if (!read.ok) return refuse(...read.problems);
  const stored = await store.risk.setRules(scope, id, read.rules, actor, new Date(nowMillis).toISOString());
  if (stored === null) return notFound(scope, id);
  return showRiskRules(store, scope, id);
}

export async function deleteRiskRules(
  store: Store,
  scope: RiskRulesScope,
  id: string,
  actor: string,
  nowMillis: number,
): Promise<AdminResult<null>> {
  if ((await accountOf(store, scope, id)) === null) return notFound(scope, id);
  await store.risk.deleteRules(scope, id, actor, new Date(nowMillis).toISOString());
  return { ok: true, value: null };
}

export type HaltAnswer = {
  halt: Halt;
  alreadyHalted: boolean;
  flattens: Array<{ signalId: string; agentIds: string[] }>;
};

/** Halts an account, a source or an agent (audited as `actor`); with `flatten`, queues the flatten too. */
export async function haltTarget(
  store: Store,
  scope: HaltScope,
  id: string,
  body: unknown,
  actor: string,
  nowMillis: number,
): Promise<AdminResult<HaltAnswer>> {
  const fields = new FieldReader(body, HALT_BODY);
  const reason = fields.string('reason');
  const flatten = fields.boolean('flatten');
  fields.rejectUnknown();
  if (fields.problems.length > 0 || typeof reason !== 'string') return refuse(...fields.problems);
  const outcome = await store.risk.halt({
    id: newId('hlt'),
    scope,
    targetId: id,
    reason: reason.trim(),
    flatten: flatten === true,
    actor,
    at: new Date(nowMillis).toISOString(),
  });
  if (outcome.kind === 'not_found') return notFound(scope, id);
  if (outcome.kind === 'already_halted')
    return { ok: true, value: { halt: outcome.halt, alreadyHalted: true, flattens: [] } };
  return { ok: true, value: { halt: outcome.halt, alreadyHalted: false, flattens: outcome.flattens } };
}

/** Releases the halt in force (audited as `actor`); what came while halted stays halted. */
export async function releaseTarget(
  store: Store,
  scope: HaltScope,
  id: string,
  body: unknown,
  actor: string,
  nowMillis: number,
): Promise<AdminResult<Halt>> {
  if (body !== undefined && body !== null) {
    const fields = new FieldReader(body, RELEASE_BODY);
    fields.rejectUnknown();
    if (fields.problems.length > 0) return refuse(...fields.problems);
  }
  const released = await store.risk.release(scope, id, actor, new Date(nowMillis).toISOString());
  if (released !== null) return { ok: true, value: released };
  if ((await accountOf(store, scope, id)) === null) return notFound(scope, id);
  return refuse({
    code: ErrorCode.NOT_FOUND,
    param: 'id',
    detail: `${scope} '${id}' is not halted, so there is nothing to release; GET /api/admin/halts lists the halts in force`,
  });
}

export const HALTS_QUERY = objectSchema({
  accountId: { type: 'string', minLength: 1, description: "only this account's halts", examples: ['acc_0123'] },
  all: { type: 'string', enum: ['true', 'false'], description: 'true: released halts too, newest first' },
  limit: { type: 'integer', minimum: 1, maximum: 500, default: 50, description: 'halts per answer' },
});

export async function listHalts(store: Store, query: ListQuery): Promise<AdminResult<{ halts: Halt[] }>> {
  const read = readListQuery(query, ['accountId', 'all']);
  if (!read.ok) return read;
  const { accountId, all, limit } = read.value;
  if (all !== undefined && all !== 'true' && all !== 'false') {
    return refuse({ code: ErrorCode.INVALID_REQUEST, param: 'all', detail: 'all must be true or false' });
  }
  const halts = await store.risk.listHalts({
    ...(accountId === undefined ? {} : { accountId }),
    activeOnly: all !== 'true',
    limit,
  });
  return { ok: true, value: { halts } };
}

export const AUDIT_QUERY = objectSchema({
  accountId: { type: 'string', minLength: 1, description: "only this account's changes", examples: ['acc_0123'] },
  limit: { type: 'integer', minimum: 1, maximum: 500, default: 50, description: 'entries per page' },
  before: { type: 'string', minLength: 1, description: "the previous page's next: older entries", examples: ['12'] },
});

export async function riskAudit(
  store: Store,
  query: ListQuery,
): Promise<AdminResult<{ entries: RiskAuditEntry[]; next: string | null }>> {
  const read = readListQuery(query, ['accountId']);
  if (!read.ok) return read;
  const { accountId, limit, before } = read.value;
  if (before !== undefined && !/^\d{1,15}$/.test(before)) {
    return refuse({
      code: ErrorCode.INVALID_REQUEST,
      param: 'before',
      detail: 'before must be the next of the previous page (a number); leave it out for the first page',
    });
  }
  const entries = await store.risk.audit({
    ...(accountId === undefined ? {} : { accountId }),
    ...(before === undefined ? {} : { beforeId: Number(before) }),
    limit,
  });
  const last = entries[entries.length - 1];
  return { ok: true, value: { entries, next: entries.length === limit && last ? String(last.id) : null } };
}
