import { ErrorCode, type Problem } from '../errors/catalog.js';
import type { Store } from '../store/store.js';
import { type AgentAnswer, failure, success } from './agent-answer.js';
import type { JsonSchema } from '../openapi/index.js';

/** The body of `PUT /api/agent/state`: the agent's to shape, but these fields have their types. */
export const AGENT_STATE_BODY: JsonSchema = {
  type: 'object',
  description: 'the account snapshot shown on the dashboard; other fields are kept as sent',
  properties: {
    balance: { type: 'number', examples: [10000] },
    equity: { type: 'number', examples: [10250.5] },
    currency: { type: 'string', examples: ['USD'] },
    positions: { type: 'array', items: {} as JsonSchema },
    orders: { type: 'array', items: {} as JsonSchema },
  },
  additionalProperties: true,
};

/**
 * How deeply objects and lists may nest in a snapshot (the snapshot object itself is level 1).
 * Real snapshots nest 3 or 4 levels; without a limit, a snapshot nested thousands deep would
 * overflow the stack when it is stored.
 */
export const MAX_STATE_DEPTH = 64;

/**
 * Records an agent's account snapshot for the dashboard. The snapshot is the
 * agent's to shape (platforms differ), but the fields the dashboard reads must have their
 * types: `balance`, `equity` numbers, `currency` a string, `positions`, `orders` lists.
 */
export async function saveAgentState(store: Store, agentId: string, body: unknown, nowMillis: number): Promise<AgentAnswer> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return failure({
      code: ErrorCode.INVALID_REQUEST,
      detail: 'send the account snapshot as a JSON object {balance, equity, currency, positions, orders}',
    });
  }
  if (nestedDeeperThan(body, MAX_STATE_DEPTH)) {
    return failure({
      code: ErrorCode.INVALID_REQUEST,
      detail: `the account snapshot is nested more than ${MAX_STATE_DEPTH} levels deep (objects and lists within each other); send a flatter snapshot`,
    });
  }
  const snapshot = body as Record<string, unknown>;
  const problems: Problem[] = [];
  for (const name of ['balance', 'equity'] as const) {
    const value = snapshot[name];
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) {
      problems.push({ code: ErrorCode.INVALID_FIELD, param: name, detail: `'${name}' must be a number` });
    }
  }
  if (snapshot.currency !== undefined && typeof snapshot.currency !== 'string') {
    problems.push({ code: ErrorCode.INVALID_FIELD, param: 'currency', detail: "'currency' must be a string such as \"USD\"" });
  }
  for (const name of ['positions', 'orders'] as const) {
    if (snapshot[name] !== undefined && !Array.isArray(snapshot[name])) {
      problems.push({ code: ErrorCode.INVALID_FIELD, param: name, detail: `'${name}' must be a list` });
    }
  }
  if (problems.length > 0) return failure(...problems);
  const savedAt = new Date(nowMillis).toISOString();
  await store.saveAgentState(agentId, snapshot, savedAt);
  return success({ savedAt });
}

/** Whether objects and lists nest in `value` more than `limit` levels deep; walks without recursion. */
function nestedDeeperThan(value: unknown, limit: number): boolean {
  const pending: Array<[unknown, number]> = [[value, 1]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, depth] = next;
    if (item === null || typeof item !== 'object') continue;
    if (depth > limit) return true;
    for (const child of Object.values(item)) if (child !== null && typeof child === 'object') pending.push([child, depth + 1]);
  }
  return false;
}
