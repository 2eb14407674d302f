import type { EffectiveRiskRules, RiskRules } from '../risk/risk-rules.js';
import type { Halt, HaltScope, RiskAuditAction, RiskAuditEntry, RiskRulesScope, StoredRiskRules } from './risk.js';

/** The instruction a flatten's log entry carries as its signal (see `AgentSignal.flatten`). */
export const FLATTEN_SIGNAL_JSON = '{"symbol":"*","action":"positionflat"}';
/** How long a flatten waits for an agent that is away before it expires. */
export const FLATTEN_LIFETIME_MS = 24 * 60 * 60 * 1000;

/** The risk tables' rows as both stores read them (times already ISO text, flags booleans). */
export interface RiskRulesRow {
  scope: string;
  id: string;
  account_id: string;
  rules: string;
  effective: string;
  updated_at: string;
}

export interface HaltRow {
  id: string;
  scope: string;
  target_id: string;
  account_id: string;
  reason: string;
  flatten: boolean;
  halted_by: string;
  halted_at: string;
  released_by: string | null;
  released_at: string | null;
}

export interface AuditRow {
  id: number;
  at: string;
  actor: string;
  action: string;
  scope: string;
  target_id: string;
  account_id: string;
  before: string | null;
  after: string | null;
}

export function storedRulesOf(row: RiskRulesRow): StoredRiskRules {
  return {
    scope: row.scope as RiskRulesScope,
    id: row.id,
    accountId: row.account_id,
    rules: JSON.parse(row.rules) as RiskRules,
    effective: JSON.parse(row.effective) as EffectiveRiskRules,
    updatedAt: row.updated_at,
  };
}

export function haltOf(row: HaltRow): Halt {
  return {
    id: row.id,
    scope: row.scope as HaltScope,
    targetId: row.target_id,
    accountId: row.account_id,
    reason: row.reason,
    flatten: row.flatten,
    haltedBy: row.halted_by,
    haltedAt: row.halted_at,
    releasedBy: row.released_by,
    releasedAt: row.released_at,
  };
}

export function auditEntryOf(row: AuditRow): RiskAuditEntry {
  return {
    id: Number(row.id),
    at: row.at,
    actor: row.actor,
    action: row.action as RiskAuditAction,
    scope: row.scope as HaltScope,
    targetId: row.target_id,
    accountId: row.account_id,
    before: row.before === null ? null : (JSON.parse(row.before) as unknown),
    after: row.after === null ? null : (JSON.parse(row.after) as unknown),
  };
}

/** A halt as the audit log keeps it (its id, reason, flatten, and the release when there is one). */
export function haltAudit(halt: Halt): Record<string, unknown> {
  return {
    id: halt.id,
    reason: halt.reason,
    flatten: halt.flatten,
    ...(halt.releasedAt === null ? {} : { releasedAt: halt.releasedAt }),
  };
}
