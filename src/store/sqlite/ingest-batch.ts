import type Database from 'better-sqlite3';

/** Where a source's accepted signals go: its account, and the agents that get a delivery. */
export interface SourceRoute {
  accountId: string;
  /** The source's revision: a request checked against another one is not recorded. */
  revision: number;
  /** In id order: the source's agentIds that belong to its account, or all its agents when that list is empty. */
  agentIds: string[];
  /**
   * Of `agentIds`, those whose delivery is halted (the account, the source or the agent is
   * halted): logged as `halted`, never handed out.
   */
  halted: Set<string>;
  /** The effective risk rules a signal of the source carries (JSON), or null when none are set. */
  risk: string | null;
}

/** An account's quota and what it used in a period (`?` period, `?` account id). */
export const QUOTA_AND_USE_SQL = `SELECT a.monthly_signal_quota AS quota, COALESCE(u.used, 0) AS used
  FROM accounts a LEFT JOIN usage u ON u.account_id = a.id AND u.period = ?
 WHERE a.id = ?`;

/** One account's quota for one period as the batch counts it. */
interface QuotaTally {
  accountId: string;
  period: string;
  quota: number;
  used: number;
  charged: boolean;
}

/** One account's entries of one UTC day that the batch logged, for the chart's counter. */
interface DayTally {
  accountId: string;
  day: string;
  accepted: number;
  rejected: number;
}

/** The batch's counts, to put back when a request's savepoint is rolled back. */
export interface BatchCounts {
  used: Map<string, number>;
  days: Map<string, { accepted: number; rejected: number }>;
}

/** What a charge came to: the unit taken, or null when the quota was used up. */
export type Charge = { used: number; limit: number } | null;

/**
 * The reads and the quota count of one ingest batch. The batch runs in one IMMEDIATE
 * transaction, so nothing else writes while it lasts: each source's route and each account's
 * quota are read once per batch rather than once per request, charges and the entries of each
 * account's day (the chart's counter, `signals_per_day`) are counted here, and `writeCounts`
 * stores them before COMMIT: one write per account and day per batch, not one per signal.
 */
export class IngestBatch {
  private readonly routes = new Map<string, SourceRoute>();
  private readonly tallies = new Map<string, QuotaTally>();
  private readonly days = new Map<string, DayTally>();

  constructor(private readonly stmt: (sql: string) => Database.Statement) {}

  /** The source's route, or null when no source has this id. */
  route(sourceId: string): SourceRoute | null {
    const known = this.routes.get(sourceId);
    if (known) return known;
    const source = this.stmt('SELECT account_id, agent_ids, revision FROM sources WHERE id = ?').get(sourceId) as
      { account_id: string; agent_ids: string; revision: number } | undefined;
    if (!source) return null;
    const wanted = JSON.parse(source.agent_ids) as string[];
    const agents = (
      wanted.length === 0
        ? this.stmt('SELECT id FROM agents WHERE account_id = ? ORDER BY id').all(source.account_id)
        : this.stmt(
            'SELECT id FROM agents WHERE account_id = ? AND id IN (SELECT value FROM json_each(?)) ORDER BY id',
          ).all(source.account_id, source.agent_ids)
    ) as { id: string }[];
    // Read in the batch's transaction, which holds the write lock: a halt or a rule change
    // committed before it is seen by every request of the batch, none committed after it can be.
    const halts = this.stmt(
      `SELECT scope, target_id FROM risk_halts WHERE account_id = ? AND released_at IS NULL
         AND (scope = 'account' OR scope = 'agent' OR (scope = 'source' AND target_id = ?))`,
    ).all(source.account_id, sourceId) as { scope: string; target_id: string }[];
    const agentIds = agents.map((agent) => agent.id);
    const whole = halts.some((halt) => halt.scope !== 'agent');
    const halted = new Set(
      whole ? agentIds : halts.filter((halt) => halt.scope === 'agent').map((halt) => halt.target_id),
    );
    const rules = this.stmt(
      `SELECT effective FROM risk_rules WHERE (scope = 'source' AND id = ?) OR (scope = 'account' AND id = ?)
        ORDER BY scope DESC LIMIT 1`,
    ).get(sourceId, source.account_id) as { effective: string } | undefined;
    const route = {
      accountId: source.account_id,
      revision: source.revision,
      agentIds,
      halted,
      risk: rules?.effective ?? null,
    };
    this.routes.set(sourceId, route);
    return route;
  }

  /** Takes one unit of the account's quota for the period, while any is left. */
  charge(accountId: string, period: string): Charge {
    const tally = this.tally(accountId, period);
    if (tally === null || tally.used >= tally.quota) return null;
    tally.used++;
    tally.charged = true;
    return { used: tally.used, limit: tally.quota };
  }

  /**
   * Counts an entry the batch logged on its account's UTC day (`receivedAt` as stored,
   * 'YYYY-MM-DDT…'); duplicates are not counted.
   */
  logged(accountId: string, receivedAt: string, kind: 'accepted' | 'rejected'): void {
    const day = receivedAt.slice(0, 10);
    const key = `${accountId}\n${day}`;
    let tally = this.days.get(key);
    if (!tally) {
      tally = { accountId, day, accepted: 0, rejected: 0 };
      this.days.set(key, tally);
    }
    tally[kind]++;
  }

  /** The counts, to put back when a request's savepoint is rolled back. */
  counts(): BatchCounts {
    return {
      used: new Map([...this.tallies].map(([key, tally]) => [key, tally.used])),
      days: new Map(
        [...this.days].map(([key, tally]) => [key, { accepted: tally.accepted, rejected: tally.rejected }]),
      ),
    };
  }

  restore(counts: BatchCounts): void {
    for (const [key, tally] of this.tallies) {
      const used = counts.used.get(key);
      if (used === undefined) this.tallies.delete(key);
      else tally.used = used;
    }
    for (const [key, tally] of this.days) {
      const before = counts.days.get(key);
      if (before === undefined) this.days.delete(key);
      else Object.assign(tally, before);
    }
  }

  /** Stores every count the batch changed; runs last, inside the batch's transaction. */
  writeCounts(): void {
    const write = this.stmt(
      `INSERT INTO usage (account_id, period, used) VALUES (?, ?, ?)
       ON CONFLICT (account_id, period) DO UPDATE SET used = excluded.used`,
    );
    for (const tally of this.tallies.values()) {
      if (tally.charged) write.run(tally.accountId, tally.period, tally.used);
    }
    if (this.days.size === 0) return;
    const add = this.stmt(
      `INSERT INTO signals_per_day (account_id, day, accepted, rejected) VALUES (?, ?, ?, ?)
       ON CONFLICT (account_id, day) DO UPDATE
         SET accepted = accepted + excluded.accepted, rejected = rejected + excluded.rejected`,
    );
    for (const tally of this.days.values()) add.run(tally.accountId, tally.day, tally.accepted, tally.rejected);
  }

  private tally(accountId: string, period: string): QuotaTally | null {
    const key = `${accountId}\n${period}`;
    const known = this.tallies.get(key);
    if (known) return known;
    const row = this.stmt(QUOTA_AND_USE_SQL).get(period, accountId) as { quota: number; used: number } | undefined;
    if (!row) return null;
    const tally = { accountId, period, quota: row.quota, used: row.used, charged: false };
    this.tallies.set(key, tally);
    return tally;
  }
}
