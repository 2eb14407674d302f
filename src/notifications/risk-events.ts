import type { Notifier } from './notifier.js';

/** What a halt stops: an account, one of its sources, or one of its agents. */
export interface HaltTarget {
  type: 'account' | 'source' | 'agent';
  id: string;
  /** Its name, for the message's first line. */
  name?: string;
}

/** A halt as the server committed it (issue 47: by hand, or by the daily-loss rule an agent reports). */
export interface RiskHalt {
  /** The account the target belongs to: its channels are told. */
  accountId: string;
  target: HaltTarget;
  /** The reason given with the halt, or the rule's own words. */
  reason: string;
  /** Who halted: `admin token`, `dashboard session`, or the agent for a rule it reported. */
  by: string;
  /** The rule that halted by itself (e.g. `maxDailyLoss`), its limit and the value reached. */
  rule?: { name: string; limit: string | number; value: string | number };
  /** Whether the halt also closed positions and cancelled orders. */
  flatten?: boolean;
  /** When it was committed (ISO); now when absent. */
  at?: string;
}

export interface RiskRelease {
  accountId: string;
  target: HaltTarget;
  by: string;
  /** How long it was halted since, for the message (ISO of the halt). */
  haltedAt?: string;
  at?: string;
}

/**
 * Tells the account's channels that trading was halted (event `risk_halted`). Call it once the
 * halt is committed, never before: the trader must not read of a halt that did not happen. Never
 * throws nor waits (see Notifier.tell). Not wired yet: the halts of issue 47 call it.
 */
export function tellRiskHalted(notifier: Notifier, halt: RiskHalt): void {
  notifier.tell(halt.accountId, {
    kind: 'risk_halted',
    subject: halt.target,
    detail: {
      reason: halt.reason,
      by: halt.by,
      rule: halt.rule?.name ?? null,
      limit: halt.rule?.limit ?? null,
      reached: halt.rule?.value ?? null,
      flatten: halt.flatten === undefined ? null : halt.flatten ? 'positions closed, orders cancelled' : 'no',
    },
    ...(halt.at !== undefined && { at: halt.at }),
  });
}

/** Tells the account's channels that a halt was released by hand (event `risk_released`), once committed. */
export function tellRiskReleased(notifier: Notifier, release: RiskRelease): void {
  notifier.tell(release.accountId, {
    kind: 'risk_released',
    subject: release.target,
    detail: { by: release.by, haltedAt: release.haltedAt ?? null },
    ...(release.at !== undefined && { at: release.at }),
  });
}
