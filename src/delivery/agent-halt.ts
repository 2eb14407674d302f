import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import { objectSchema } from '../openapi/index.js';
import { newId } from '../security/random-secrets.js';
import type { AgentIdentity } from '../store/records.js';
import type { Store } from '../store/store.js';
import { type AgentAnswer, failure, success } from './agent-answer.js';

// eslint-disable-next-line no-control-regex -- control characters are refused in free text
const CONTROL = /[\u0000-\u001f\u007f]/;

/** The rules whose breach halts the account by itself (the agent sees the venue's equity). */
export const HALTING_RULES = ['maxDailyLoss', 'maxTotalLoss'] as const;

/** The body of `POST /api/agent/halt`. */
export const AGENT_HALT_BODY = objectSchema(
  {
    rule: { type: 'string', enum: [...HALTING_RULES], description: 'the rule the account reached' },
    reason: {
      type: 'string',
      minLength: 1,
      maxLength: 500,
      description: 'the limit and the value it reached, as the agent saw them',
      examples: ['daily loss 5.2 % of 100000 USD reached the limit of 5 %'],
    },
  },
  ['rule', 'reason'],
);

/**
 * An agent reports that its account reached a loss rule: the agent's ACCOUNT is halted, audited
 * with the agent as who. Answers 201 with the halt, or 200 with the halt already in force (an
 * agent reporting again, or another agent of the account first).
 */
export async function reportAgentHalt(
  store: Store,
  agent: AgentIdentity,
  body: unknown,
  nowMillis: number,
): Promise<AgentAnswer> {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return failure({ code: ErrorCode.INVALID_REQUEST, detail: 'send {"rule": "maxDailyLoss", "reason": "…"}' });
  }
  const fields = body as Record<string, unknown>;
  const problems: Problem[] = [...unknownNames(Object.keys(fields), ['rule', 'reason'], 'field')];
  if (typeof fields.rule !== 'string' || !(HALTING_RULES as readonly string[]).includes(fields.rule)) {
    problems.push({
      code: ErrorCode.INVALID_FIELD,
      param: 'rule',
      detail: `'rule' must be one of ${HALTING_RULES.join(', ')}: the rule whose limit the account reached`,
    });
  }
  if (
    typeof fields.reason !== 'string' ||
    fields.reason.trim() === '' ||
    fields.reason.length > 500 ||
    CONTROL.test(fields.reason)
  ) {
    problems.push({
      code: ErrorCode.INVALID_FIELD,
      param: 'reason',
      detail: "'reason' must be a non-empty string of at most 500 characters: the limit and the value reached",
    });
  }
  if (problems.length > 0) return failure(...problems);
  const outcome = await store.risk.halt({
    id: newId('hlt'),
    scope: 'account',
    targetId: agent.accountId,
    reason: `${fields.rule as string}: ${(fields.reason as string).trim()}`,
    flatten: false,
    actor: `agent ${agent.id}`,
    at: new Date(nowMillis).toISOString(),
  });
  if (outcome.kind === 'not_found') {
    return failure({ code: ErrorCode.NOT_FOUND, detail: `the agent's account ${agent.accountId} no longer exists` });
  }
  return outcome.kind === 'halted'
    ? success({ halt: outcome.halt, alreadyHalted: false }, 201)
    : success({ halt: outcome.halt, alreadyHalted: true }, 200);
}
