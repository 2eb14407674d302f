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
 * Records an agent's account snapshot for the dashboard. The snapshot is the
 * agent's to shape (platforms differ), but the fields the dashboard reads must have their
 * types: `balance`, `equity` numbers, `currency` a string, `positions`, `orders` lists. Its
 * nesting and size were bounded before it was parsed (`jsonBodyProblem`), as every agent body's.
 */
export async function saveAgentState(
  store: Store,
  agentId: string,
  body: unknown,
  nowMillis: number,
): Promise<AgentAnswer> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return failure({
      code: ErrorCode.INVALID_REQUEST,
      detail: 'send the account snapshot as a JSON object {balance, equity, currency, positions, orders}',
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
    problems.push({
      code: ErrorCode.INVALID_FIELD,
      param: 'currency',
      detail: '\'currency\' must be a string such as "USD"',
    });
  }
  for (const name of ['positions', 'orders'] as const) {
    if (snapshot[name] !== undefined && !Array.isArray(snapshot[name])) {
      problems.push({ code: ErrorCode.INVALID_FIELD, param: name, detail: `'${name}' must be a list` });
    }
  }
  if (problems.length > 0) return failure(...problems);
  const savedAt = new Date(nowMillis).toISOString();
  await store.agents.saveState(agentId, snapshot, savedAt);
  return success({ savedAt });
}
