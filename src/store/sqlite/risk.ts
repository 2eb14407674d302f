import { narrowRiskRules, type RiskRules } from '../../risk/risk-rules.js';
import { isoTime } from '../iso-time.js';
import type {
  Halt,
  HaltOutcome,
  HaltScope,
  NewHalt,
  QueuedFlatten,
  Risk,
  RiskAuditAction,
  RiskAuditEntry,
  RiskRulesScope,
  StoredRiskRules,
} from '../risk.js';
import {
  auditEntryOf,
  FLATTEN_LIFETIME_MS,
  FLATTEN_SIGNAL_JSON,
  haltAudit,
  haltOf,
  storedRulesOf,
  type AuditRow,
  type HaltRow,
  type RiskRulesRow,
} from '../risk-rows.js';
import type { SqliteConnection } from './connection.js';

type SqliteHaltRow = Omit<HaltRow, 'flatten'> & { flatten: number };

/** Risk rules, halts and the audit log: `risk_rules`, `risk_halts`, `risk_audit` (migration 020). */
export class SqliteRisk implements Risk {
  constructor(
    private readonly connection: SqliteConnection,
    /** Tells this store's watchers of agents with new deliveries (a flatten), after the commit. */
    private readonly notify: (agentIds: string[]) => void,
  ) {}

  async getRules(scope: RiskRulesScope, id: string): Promise<StoredRiskRules | null> {
    const row = this.connection.stmt('SELECT * FROM risk_rules WHERE scope = ? AND id = ?').get(scope, id) as
      RiskRulesRow | undefined;
    return row ? storedRulesOf(row) : null;
  }

  async listRules(accountId: string): Promise<StoredRiskRules[]> {
    const rows = this.connection
      .stmt('SELECT * FROM risk_rules WHERE account_id = ? ORDER BY scope, id')
      .all(accountId) as RiskRulesRow[];
    return rows.map(storedRulesOf);
  }

  async setRules(
    scope: RiskRulesScope,
    id: string,
    rules: RiskRules,
    actor: string,
    at: string,
  ): Promise<StoredRiskRules | null> {
    const when = isoTime(at);
    return this.connection.db
      .transaction((): StoredRiskRules | null => {
        const accountId = this.accountOf(scope, id);
        if (accountId === null) return null;
        const before = this.rulesRow(scope, id);
        this.connection
          .stmt(
            `INSERT INTO risk_rules (scope, id, account_id, rules, effective, updated_at) VALUES (?, ?, ?, ?, '{}', ?)
             ON CONFLICT (scope, id) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at`,
          )
          .run(scope, id, accountId, JSON.stringify(rules), when);
        this.recompute(accountId);
        this.note(when, actor, 'rules_set', scope, id, accountId, before?.rules ?? null, JSON.stringify(rules));
        return storedRulesOf(this.rulesRow(scope, id)!);
      })
      .immediate();
  }

  async deleteRules(scope: RiskRulesScope, id: string, actor: string, at: string): Promise<boolean> {
    const when = isoTime(at);
    return this.connection.db
      .transaction((): boolean => {
        const before = this.rulesRow(scope, id);
        if (!before) return false;
        this.connection.stmt('DELETE FROM risk_rules WHERE scope = ? AND id = ?').run(scope, id);
        this.recompute(before.account_id);
        this.note(when, actor, 'rules_deleted', scope, id, before.account_id, before.rules, null);
        return true;
      })
      .immediate();
  }

  async halt(halt: NewHalt): Promise<HaltOutcome> {
    const when = isoTime(halt.at);
    const outcome = this.connection.db
      .transaction((): HaltOutcome => {
        const accountId = this.accountOf(halt.scope, halt.targetId);
        if (accountId === null) return { kind: 'not_found' };
        const held = this.connection
          .stmt('SELECT * FROM risk_halts WHERE scope = ? AND target_id = ? AND released_at IS NULL')
          .get(halt.scope, halt.targetId) as SqliteHaltRow | undefined;
        if (held) return { kind: 'already_halted', halt: sqliteHaltOf(held) };
        this.connection
          .stmt(
            `INSERT INTO risk_halts (id, scope, target_id, account_id, reason, flatten, halted_by, halted_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
          )
          .run(halt.id, halt.scope, halt.targetId, accountId, halt.reason, halt.flatten ? 1 : 0, halt.actor, when);
        this.haltQueued(halt.scope, halt.targetId, accountId);
        const made = sqliteHaltOf(
          this.connection.stmt('SELECT * FROM risk_halts WHERE id = ?').get(halt.id) as SqliteHaltRow,
        );
        this.note(
          when,
          halt.actor,
          'halted',
          halt.scope,
          halt.targetId,
          accountId,
          null,
          JSON.stringify(haltAudit(made)),
        );
        const flattens: QueuedFlatten[] = [];
        if (halt.flatten) {
          const queued = this.queueFlatten(halt, accountId, when);
          if (queued) {
            flattens.push(queued);
            this.note(
              when,
              halt.actor,
              'flatten_queued',
              halt.scope,
              halt.targetId,
              accountId,
              null,
              JSON.stringify(queued),
            );
          }
        }
        return { kind: 'halted', halt: made, flattens };
      })
      .immediate();
    if (outcome.kind === 'halted') {
      const agents = outcome.flattens.flatMap((flatten) => flatten.agentIds);
      if (agents.length > 0) this.notify(agents);
    }
    return outcome;
  }

  async release(scope: HaltScope, targetId: string, actor: string, at: string): Promise<Halt | null> {
    const when = isoTime(at);
    return this.connection.db
      .transaction((): Halt | null => {
        const row = this.connection
          .stmt(
            `UPDATE risk_halts SET released_at = ?, released_by = ?
              WHERE scope = ? AND target_id = ? AND released_at IS NULL RETURNING *`,
          )
          .get(when, actor, scope, targetId) as SqliteHaltRow | undefined;
        if (!row) return null;
        const released = sqliteHaltOf(row);
        this.note(
          when,
          actor,
          'released',
          scope,
          targetId,
          released.accountId,
          JSON.stringify(haltAudit({ ...released, releasedAt: null })),
          JSON.stringify(haltAudit(released)),
        );
        return released;
      })
      .immediate();
  }

  async listHalts(filter: { accountId?: string; activeOnly: boolean; limit: number }): Promise<Halt[]> {
    const rows = this.connection
      .stmt(
        `SELECT * FROM risk_halts WHERE (@account IS NULL OR account_id = @account)
           AND (@active = 0 OR released_at IS NULL)
         ORDER BY halted_at DESC, id DESC LIMIT CAST(@limit AS INTEGER)`,
      )
      .all({
        account: filter.accountId ?? null,
        active: filter.activeOnly ? 1 : 0,
        limit: filter.limit,
      }) as SqliteHaltRow[];
    return rows.map(sqliteHaltOf);
  }

  async audit(filter: { accountId?: string; beforeId?: number; limit: number }): Promise<RiskAuditEntry[]> {
    const rows = this.connection
      .stmt(
        `SELECT * FROM risk_audit WHERE (@account IS NULL OR account_id = @account) AND (@before IS NULL OR id < @before)
         ORDER BY id DESC LIMIT CAST(@limit AS INTEGER)`,
      )
      .all({ account: filter.accountId ?? null, before: filter.beforeId ?? null, limit: filter.limit }) as AuditRow[];
    return rows.map(auditEntryOf);
  }

  /** The account the target belongs to, or null when there is no such target. */
  private accountOf(scope: HaltScope, id: string): string | null {
    const table = scope === 'account' ? 'accounts' : scope === 'source' ? 'sources' : 'agents';
    const column = scope === 'account' ? 'id' : 'account_id';
    const row = this.connection.stmt(`SELECT ${column} AS account_id FROM ${table} WHERE id = ?`).get(id) as
      { account_id: string } | undefined;
    return row?.account_id ?? null;
  }

  private rulesRow(scope: RiskRulesScope, id: string): RiskRulesRow | undefined {
    return this.connection.stmt('SELECT * FROM risk_rules WHERE scope = ? AND id = ?').get(scope, id) as
      RiskRulesRow | undefined;
  }

  /** What the account's and each of its sources' rules come to, written back beside them. */
  private recompute(accountId: string): void {
    const rows = this.connection
      .stmt('SELECT scope, id, rules FROM risk_rules WHERE account_id = ?')
      .all(accountId) as Pick<RiskRulesRow, 'scope' | 'id' | 'rules'>[];
    const account = rows.find((row) => row.scope === 'account');
    const accountRules = account ? (JSON.parse(account.rules) as RiskRules) : null;
    const write = this.connection.stmt('UPDATE risk_rules SET effective = ? WHERE scope = ? AND id = ?');
    for (const row of rows) {
      const own = JSON.parse(row.rules) as RiskRules;
      const effective = row.scope === 'account' ? narrowRiskRules(own, null) : narrowRiskRules(accountRules, own);
      write.run(JSON.stringify(effective), row.scope, row.id);
    }
  }

  /** The halted scope's deliveries not handed out yet become `halted` (a flatten's stay queued). */
  private haltQueued(scope: HaltScope, targetId: string, accountId: string): void {
    const notFlatten = '(SELECT s.flatten FROM signals s WHERE s.id = deliveries.signal_id) IS NULL';
    if (scope === 'agent') {
      this.connection
        .stmt(`UPDATE deliveries SET status = 'halted' WHERE agent_id = ? AND status = 'queued' AND ${notFlatten}`)
        .run(targetId);
      return;
    }
    const agents = this.connection.stmt('SELECT id FROM agents WHERE account_id = ?').all(accountId) as {
      id: string;
    }[];
    const bySource =
      scope === 'source' ? ' AND (SELECT s.source_id FROM signals s WHERE s.id = deliveries.signal_id) = ?' : '';
    const update = this.connection.stmt(
      `UPDATE deliveries SET status = 'halted' WHERE agent_id = ? AND status = 'queued' AND ${notFlatten}${bySource}`,
    );
    for (const agent of agents) {
      if (scope === 'source') update.run(agent.id, targetId);
      else update.run(agent.id);
    }
  }

  /**
   * The flatten's log entry (under the halted source, or the account's first source: the log
   * keeps entries by source) and one delivery to each agent of the account, or to the halted
   * agent. Null when the account has no source or no agent: nothing to log it under or send it to.
   */
  private queueFlatten(halt: NewHalt, accountId: string, when: string): QueuedFlatten | null {
    const source = (
      halt.scope === 'source'
        ? { id: halt.targetId }
        : this.connection
            .stmt('SELECT id FROM sources WHERE account_id = ? ORDER BY created_at, id LIMIT 1')
            .get(accountId)
    ) as { id: string } | undefined;
    const agentIds =
      halt.scope === 'agent'
        ? [halt.targetId]
        : (
            this.connection.stmt('SELECT id FROM agents WHERE account_id = ? ORDER BY id').all(accountId) as {
              id: string;
            }[]
          ).map((agent) => agent.id);
    if (!source || agentIds.length === 0) return null;
    const signalId = `${halt.id.replace(/^hlt_/, 'sig_')}`;
    this.connection
      .stmt(
        `INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, raw_body, normalized, flatten)
         VALUES (?, ?, ?, ?, 'queued', 202, ?, ?, ?)`,
      )
      .run(signalId, source.id, accountId, when, `flatten: ${halt.reason}`, FLATTEN_SIGNAL_JSON, halt.reason);
    const expiresAt = new Date(Date.parse(when) + FLATTEN_LIFETIME_MS).toISOString();
    const bump = this.connection.stmt('UPDATE agents SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq');
    const insert = this.connection.stmt(
      `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, attempts, received_at)
       VALUES (?, ?, ?, 'queued', ?, 0, ?)`,
    );
    for (const agentId of agentIds) {
      const { last_seq: seq } = bump.get(agentId) as { last_seq: number };
      insert.run(signalId, agentId, seq, expiresAt, when);
    }
    return { signalId, agentIds };
  }

  private note(
    at: string,
    actor: string,
    action: RiskAuditAction,
    scope: HaltScope,
    targetId: string,
    accountId: string,
    before: string | null,
    after: string | null,
  ): void {
    this.connection
      .stmt(
        `INSERT INTO risk_audit (at, actor, action, scope, target_id, account_id, before, after)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(at, actor, action, scope, targetId, accountId, before, after);
  }
}

function sqliteHaltOf(row: SqliteHaltRow): Halt {
  return haltOf({ ...row, flatten: row.flatten === 1 });
}
