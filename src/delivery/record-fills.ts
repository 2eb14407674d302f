import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import { objectSchema, type JsonSchema } from '../openapi/index.js';
import { MAX_REPORT_ENTRIES, type LedgerBust, type LedgerFill, type LedgerFunding } from '../protocol/ledger-report.js';
import type { AgentIdentity } from '../store/records.js';
import type { Store } from '../store/store.js';
import { type AgentAnswer, failure, success } from './agent-answer.js';

const TIME = { type: 'string', format: 'date-time' } as const;
const ID = { type: 'string', minLength: 1, maxLength: 200 } as const;

const FILL = objectSchema(
  {
    venueFillId: { ...ID, description: "the venue's id for the fill (its trade id)" },
    orderId: { type: 'string', maxLength: 200, description: "the venue's id for the order it filled" },
    symbol: { type: 'string', minLength: 1, maxLength: 64 },
    side: { type: 'string', enum: ['buy', 'sell'] },
    lots: { type: 'number', minimum: 0, description: 'above 0' },
    price: { type: 'number', minimum: 0, description: 'above 0' },
    fee: { type: 'number', description: 'what the venue charged for it (negative: a rebate)' },
    feeCurrency: { type: 'string', maxLength: 16 },
    at: TIME,
    signalId: { type: ['string', 'null'], maxLength: 200, description: 'the signal the fill belongs to' },
    effect: { type: 'string', enum: ['open', 'close'], description: 'whether it opened or closed lots' },
    profit: { type: ['number', 'null'], description: "a closing fill's profit before fees, as the venue booked it" },
    quote: { type: ['number', 'null'], description: 'the quote when the agent took the signal' },
  },
  ['venueFillId', 'orderId', 'symbol', 'side', 'lots', 'price', 'fee', 'feeCurrency', 'at', 'signalId'],
);
const FUNDING = objectSchema(
  {
    venueFundingId: { ...ID, description: "the venue's id for the payment" },
    symbol: { type: 'string', minLength: 1, maxLength: 64 },
    amount: { type: 'number', description: 'received (positive) or paid (negative)' },
    currency: { type: 'string', maxLength: 16 },
    at: TIME,
  },
  ['venueFundingId', 'symbol', 'amount', 'currency', 'at'],
);
const BUST = objectSchema(
  {
    venueFillId: { ...ID, description: "the venue's id of the fill it took back, as the fill was reported" },
    lots: { type: 'number', minimum: 0, description: 'the lots taken back, above 0' },
    at: TIME,
  },
  ['venueFillId', 'lots', 'at'],
);

/** The body of `POST /api/agent/fills`. */
export const FILLS_BODY = objectSchema(
  {
    fills: { type: 'array', maxItems: MAX_REPORT_ENTRIES, items: FILL },
    funding: { type: 'array', maxItems: MAX_REPORT_ENTRIES, items: FUNDING },
    busts: {
      type: 'array',
      maxItems: MAX_REPORT_ENTRIES,
      items: BUST,
      description: 'fills the venue took back (FIX ExecType H): the fill counts only for the lots left',
    },
  },
  ['fills'],
);

/**
 * Records the fills, funding payments and busts an agent reports for the ledger. Idempotent: a
 * fill, payment or bust this agent reported before (same venue id) is left as it was and counted `known`, so an
 * agent that did not see the answer sends the same report again safely. Checked whole before
 * anything is recorded: one bad entry refuses the report, naming the entry and field.
 */
export async function recordFills(
  store: Store,
  agent: AgentIdentity,
  body: unknown,
  now: number,
): Promise<AgentAnswer> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return failure({
      code: ErrorCode.INVALID_REQUEST,
      detail: 'send the report as a JSON object {fills: [...], funding: [...]}',
    });
  }
  const report = body as Record<string, unknown>;
  const problems: Problem[] = [...unknownNames(Object.keys(report), Object.keys(FILLS_BODY.properties), 'field')];
  const fills = entries(report, 'fills', FILL, problems) as LedgerFill[];
  const funding = entries(report, 'funding', FUNDING, problems) as LedgerFunding[];
  const busts = entries(report, 'busts', BUST, problems) as LedgerBust[];
  if (fills.length + funding.length + busts.length > MAX_REPORT_ENTRIES) {
    problems.push({
      code: ErrorCode.INVALID_FIELD,
      param: 'fills',
      detail: `a report holds at most ${MAX_REPORT_ENTRIES} fills, funding payments and busts together; send the rest in another`,
    });
  }
  if (problems.length > 0) return failure(...problems);
  const outcome = await store.ledger.record(
    { id: agent.id, accountId: agent.accountId },
    fills,
    funding,
    new Date(now).toISOString(),
    busts,
  );
  return success(outcome);
}

function entries(report: Record<string, unknown>, name: string, schema: JsonSchema, problems: Problem[]): unknown[] {
  const list = report[name];
  if (list === undefined && name !== 'fills') return [];
  if (!Array.isArray(list)) {
    problems.push({ code: ErrorCode.INVALID_FIELD, param: name, detail: `'${name}' must be a list` });
    return [];
  }
  list.forEach((entry, index) => problems.push(...entryProblems(entry, `${name}[${index}]`, schema)));
  return list;
}

/** The problems of one entry against its schema: unknown, missing and mistyped fields. */
function entryProblems(entry: unknown, path: string, schema: JsonSchema): Problem[] {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    return [{ code: ErrorCode.INVALID_FIELD, param: path, detail: `'${path}' must be an object` }];
  }
  const object = entry as Record<string, unknown>;
  const properties = (schema as { properties: Record<string, JsonSchema> }).properties;
  const required = (schema as { required?: string[] }).required ?? [];
  const problems: Problem[] = unknownNames(Object.keys(object), Object.keys(properties), 'field').map((p) => ({
    ...p,
    param: `${path}.${p.param ?? ''}`,
  }));
  for (const [field, rule] of Object.entries(properties)) {
    const value = object[field];
    const param = `${path}.${field}`;
    if (value === undefined) {
      if (required.includes(field))
        problems.push({ code: ErrorCode.INVALID_FIELD, param, detail: `'${param}' is missing` });
      continue;
    }
    const detail = valueProblem(value, rule as Record<string, unknown>);
    if (detail !== null) problems.push({ code: ErrorCode.INVALID_FIELD, param, detail: `'${param}' ${detail}` });
  }
  return problems;
}

function valueProblem(value: unknown, rule: Record<string, unknown>): string | null {
  const types = ([] as unknown[]).concat(rule.type);
  if (value === null) return types.includes('null') ? null : 'must not be null';
  if (types.includes('number')) {
    if (typeof value !== 'number' || !Number.isFinite(value)) return 'must be a number';
    if (rule.minimum !== undefined && value <= (rule.minimum as number)) return 'must be above 0';
    return null;
  }
  if (typeof value !== 'string') return 'must be a string';
  if (rule.enum !== undefined && !(rule.enum as string[]).includes(value))
    return `must be one of ${(rule.enum as string[]).join(', ')}`;
  if (rule.minLength !== undefined && value.length < (rule.minLength as number)) return 'must not be empty';
  if (rule.maxLength !== undefined && value.length > (rule.maxLength as number))
    return `must be at most ${rule.maxLength as number} characters`;
  if (rule.format === 'date-time' && !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(value))
    return 'must be a time such as 2026-12-02T09:30:00.031Z';
  return null;
}
