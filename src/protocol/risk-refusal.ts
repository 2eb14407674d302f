import { ErrorCode } from '../errors/catalog.js';
import type { RiskViolation } from '../risk/entry-check.js';

/**
 * What an acknowledgement's `result` carries when a risk rule at the agent refused the signal.
 * The server reads the rule from it to tell the account's notifications (`risk_rule_hit`), so
 * both ends use this one shape.
 */
export interface RiskRefusal {
  code: typeof ErrorCode.RISK_LIMIT;
  rule: string;
  limit: number | string;
  value: number | string;
}

export function riskRefusal(violation: RiskViolation): RiskRefusal {
  return { code: ErrorCode.RISK_LIMIT, rule: violation.rule, limit: violation.limit, value: violation.value };
}

/** The rule an acknowledgement's result names when a risk rule refused the signal, else null. */
export function riskRuleOf(result: unknown): string | null {
  if (result === null || typeof result !== 'object') return null;
  const { code, rule } = result as Partial<RiskRefusal>;
  return code === ErrorCode.RISK_LIMIT && typeof rule === 'string' ? rule : null;
}
