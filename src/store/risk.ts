import type { EffectiveRiskRules, RiskRules } from '../risk/risk-rules.js';

/** What rules are set on: an account, or one of its sources (which may only tighten them). */
export type RiskRulesScope = 'account' | 'source';
/** What a halt stops: every agent of an account, every signal of a source, or one agent. */
export type HaltScope = 'account' | 'source' | 'agent';

/** Rules as stored: the ones set, and what they come to for a signal (`narrowRiskRules`). */
export interface StoredRiskRules {
  scope: RiskRulesScope;
  /** The account's or the source's id. */
  id: string;
  accountId: string;
  rules: RiskRules;
  /**
   * For an account, its rules alone; for a source, the account's narrowed by the source's. What a
   * signal of the source (or of a source without rules of its own) carries to its agents.
   */
  effective: EffectiveRiskRules;
  updatedAt: string;
}

export interface Halt {
  id: string;
  scope: HaltScope;
  targetId: string;
  accountId: string;
  reason: string;
  /** The halt also queued a flatten to the account's agents. */
  flatten: boolean;
  /** Who halted: `admin token`, `dashboard session …`, or `agent agt_…`. */
  haltedBy: string;
  haltedAt: string;
  releasedBy: string | null;
  releasedAt: string | null;
}

export type RiskAuditAction = 'rules_set' | 'rules_deleted' | 'halted' | 'released' | 'flatten_queued';

/** One change to rules, halts or flattens, as the audit log keeps it. */
export interface RiskAuditEntry {
  id: number;
  at: string;
  actor: string;
  action: RiskAuditAction;
  scope: HaltScope;
  targetId: string;
  accountId: string;
  /** The rules or the halt before the change (null: none), and after it. */
  before: unknown;
  after: unknown;
}

export interface NewHalt {
  id: string;
  scope: HaltScope;
  targetId: string;
  reason: string;
  /** Queue a flatten to every agent of the halted scope's account(s) (see `Risk.halt`). */
  flatten: boolean;
  actor: string;
  at: string;
}

/** A flatten queued by a halt: the signal log entry and the agents it went to. */
export interface QueuedFlatten {
  signalId: string;
  agentIds: string[];
}

export type HaltOutcome =
  /** The target was not halted: now it is (and `flattens` were queued, when asked). */
  | { kind: 'halted'; halt: Halt; flattens: QueuedFlatten[] }
  /** The target was already halted: nothing changed, the halt in force is answered. */
  | { kind: 'already_halted'; halt: Halt }
  /** No account, source or agent has that id. */
  | { kind: 'not_found' };

/**
 * Risk rules (per account and per source), halts, and the audit log of every change to them
 * (`store.risk`). The ingest reads the rules and halts in its own transaction: a signal committed
 * after a rule change or a halt committed carries the new rules, or is halted.
 */
export interface Risk {
  getRules(scope: RiskRulesScope, id: string): Promise<StoredRiskRules | null>;
  /** The account's rules and those of each of its sources that has some. */
  listRules(accountId: string): Promise<StoredRiskRules[]>;
  /**
   * Sets the rules of an account or a source (replacing what was set), recomputes what they come
   * to for every source of the account, and audits the change: all in one transaction. Null when
   * no account or source has the id.
   */
  setRules(
    scope: RiskRulesScope,
    id: string,
    rules: RiskRules,
    actor: string,
    at: string,
  ): Promise<StoredRiskRules | null>;
  /** Removes the rules (audited); false when none were set. */
  deleteRules(scope: RiskRulesScope, id: string, actor: string, at: string): Promise<boolean>;
  /**
   * Halts the target, audited. In the same transaction, its deliveries still `queued` become
   * `halted` (never handed out, not even after the release), and with `flatten`, one flatten
   * delivery is queued to each agent of the account (of the agent, for an agent's halt).
   */
  halt(halt: NewHalt): Promise<HaltOutcome>;
  /** Releases the halt in force on the target (audited); null when it was not halted. */
  release(scope: HaltScope, targetId: string, actor: string, at: string): Promise<Halt | null>;
  /** Halts newest first: those in force only, or every one; of one account, or of all. */
  listHalts(filter: { accountId?: string; activeOnly: boolean; limit: number }): Promise<Halt[]>;
  /** The audit log, newest first, before the entry `beforeId` when given. */
  audit(filter: { accountId?: string; beforeId?: number; limit: number }): Promise<RiskAuditEntry[]>;
}
