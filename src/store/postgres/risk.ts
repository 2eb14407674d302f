import type pg from 'pg';
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
import { DELIVERY_CHANNEL, deliveryPayloads } from './delivery-channel.js';
import { inTransaction } from './transaction.js';

/**
 * The advisory lock between halts and ingests: `signalgate_ingest` holds it shared for its call,
 * a halt exclusively before it writes. So a halt waits for the ingests under way to commit (and
 * then marks their queued deliveries halted), and an ingest that starts after it reads the halt.
 */
export const RISK_LOCK_SQL = `hashtextextended('signalgate.risk' || chr(10) || current_schema(), 0)`;

/** The rows with their times as node-postgres reads timestamptz. */
type PgRulesRow = Omit<RiskRulesRow, 'updated_at'> & { updated_at: string | Date };
type PgHaltRow = Omit<HaltRow, 'halted_at' | 'released_at'> & {
  halted_at: string | Date;
  released_at: string | Date | null;
};
type PgAuditRow = Omit<AuditRow, 'at'> & { at: string | Date };

function text(value: string | Date): string;
function text(value: string | Date | null): string | null;
function text(value: string | Date | null): string | null {
  return value instanceof Date ? value.toISOString() : value;
}

function rulesOf(row: PgRulesRow): StoredRiskRules {
  return storedRulesOf({ ...row, updated_at: text(row.updated_at) });
}

function pgHaltOf(row: PgHaltRow): Halt {
  return haltOf({
    ...row,
    halted_at: text(row.halted_at),
    released_at: text(row.released_at),
  });
}

/** Risk rules, halts and the audit log on PostgreSQL: the tables of migration 022. */
export class PostgresRisk implements Risk {
  constructor(
    private readonly pool: pg.Pool,
    private readonly notices: { scope: () => string; instance: string },
    /** Tells this instance's watchers of agents with new deliveries (a flatten), after the commit. */
    private readonly notify: (agentIds: string[]) => void,
  ) {}

  async getRules(scope: RiskRulesScope, id: string): Promise<StoredRiskRules | null> {
    const { rows } = await this.pool.query<PgRulesRow>('SELECT * FROM risk_rules WHERE scope = $1 AND id = $2', [
      scope,
      id,
    ]);
    return rows[0] ? rulesOf(rows[0]) : null;
  }

  async listRules(accountId: string): Promise<StoredRiskRules[]> {
    const { rows } = await this.pool.query<PgRulesRow>(
      'SELECT * FROM risk_rules WHERE account_id = $1 ORDER BY scope, id',
      [accountId],
    );
    return rows.map(rulesOf);
  }

  async setRules(
    scope: RiskRulesScope,
    id: string,
    rules: RiskRules,
    actor: string,
    at: string,
  ): Promise<StoredRiskRules | null> {
    const when = isoTime(at);
    return inTransaction(this.pool, async (client) => {
      const accountId = await this.accountOf(client, scope, id);
      if (accountId === null) return null;
      // Rule changes of one account are serialised on the account's row, so each recompute reads the last.
      await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [accountId]);
      const before = await this.rulesRow(client, scope, id);
      await client.query(
        `INSERT INTO risk_rules (scope, id, account_id, rules, effective, updated_at) VALUES ($1, $2, $3, $4, '{}', $5)
         ON CONFLICT (scope, id) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at`,
        [scope, id, accountId, JSON.stringify(rules), when],
      );
      await this.recompute(client, accountId);
      await this.note(
        client,
        when,
        actor,
        'rules_set',
        scope,
        id,
        accountId,
        before?.rules ?? null,
        JSON.stringify(rules),
      );
      return rulesOf((await this.rulesRow(client, scope, id))!);
    });
  }

  async deleteRules(scope: RiskRulesScope, id: string, actor: string, at: string): Promise<boolean> {
    const when = isoTime(at);
    return inTransaction(this.pool, async (client) => {
      const before = await this.rulesRow(client, scope, id);
      if (!before) return false;
      await client.query('SELECT 1 FROM accounts WHERE id = $1 FOR NO KEY UPDATE', [before.account_id]);
      const { rowCount } = await client.query('DELETE FROM risk_rules WHERE scope = $1 AND id = $2', [scope, id]);
      if (!rowCount) return false;
      await this.recompute(client, before.account_id);
      await this.note(client, when, actor, 'rules_deleted', scope, id, before.account_id, before.rules, null);
      return true;
    });
  }

  async halt(halt: NewHalt): Promise<HaltOutcome> {
    const when = isoTime(halt.at);
    const outcome = await inTransaction(this.pool, async (client): Promise<HaltOutcome> => {
      // Waits for the ingests under way; those after it read this halt (RISK_LOCK_SQL).
      await client.query(`SELECT pg_advisory_xact_lock(${RISK_LOCK_SQL})`);
      const accountId = await this.accountOf(client, halt.scope, halt.targetId);
      if (accountId === null) return { kind: 'not_found' };
      const inserted = await client.query<PgHaltRow>(
        `INSERT INTO risk_halts (id, scope, target_id, account_id, reason, flatten, halted_by, halted_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
         ON CONFLICT (scope, target_id) WHERE released_at IS NULL DO NOTHING RETURNING *`,
        [halt.id, halt.scope, halt.targetId, accountId, halt.reason, halt.flatten, halt.actor, when],
      );
      if (!inserted.rows[0]) {
        const { rows } = await client.query<PgHaltRow>(
          'SELECT * FROM risk_halts WHERE scope = $1 AND target_id = $2 AND released_at IS NULL',
          [halt.scope, halt.targetId],
        );
        return { kind: 'already_halted', halt: pgHaltOf(rows[0]!) };
      }
      const made = pgHaltOf(inserted.rows[0]);
      await this.haltQueued(client, halt.scope, halt.targetId, accountId);
      await this.note(
        client,
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
        const queued = await this.queueFlatten(client, halt, accountId, when);
        if (queued) {
          flattens.push(queued);
          await this.note(
            client,
            when,
            halt.actor,
            'flatten_queued',
            halt.scope,
            halt.targetId,
            accountId,
            null,
            JSON.stringify(queued),
          );
          for (const payload of deliveryPayloads(this.notices.scope(), this.notices.instance, queued.agentIds)) {
            await client.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, payload]);
          }
        }
      }
      return { kind: 'halted', halt: made, flattens };
    });
    if (outcome.kind === 'halted') {
      const agents = outcome.flattens.flatMap((flatten) => flatten.agentIds);
      if (agents.length > 0) this.notify(agents);
    }
    return outcome;
  }

  async release(scope: HaltScope, targetId: string, actor: string, at: string): Promise<Halt | null> {
    const when = isoTime(at);
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<PgHaltRow>(
        `UPDATE risk_halts SET released_at = $1, released_by = $2
          WHERE scope = $3 AND target_id = $4 AND released_at IS NULL RETURNING *`,
        [when, actor, scope, targetId],
      );
      if (!rows[0]) return null;
      const released = pgHaltOf(rows[0]);
      await this.note(
        client,
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
    });
  }

  async listHalts(filter: { accountId?: string; activeOnly: boolean; limit: number }): Promise<Halt[]> {
    const { rows } = await this.pool.query<PgHaltRow>(
      `SELECT * FROM risk_halts WHERE ($1::text IS NULL OR account_id = $1) AND (NOT $2 OR released_at IS NULL)
        ORDER BY halted_at DESC, id DESC LIMIT $3`,
      [filter.accountId ?? null, filter.activeOnly, filter.limit],
    );
    return rows.map(pgHaltOf);
  }

  async audit(filter: { accountId?: string; beforeId?: number; limit: number }): Promise<RiskAuditEntry[]> {
    const { rows } = await this.pool.query<PgAuditRow>(
      `SELECT * FROM risk_audit WHERE ($1::text IS NULL OR account_id = $1) AND ($2::bigint IS NULL OR id < $2)
        ORDER BY id DESC LIMIT $3`,
      [filter.accountId ?? null, filter.beforeId ?? null, filter.limit],
    );
    return rows.map((row) => auditEntryOf({ ...row, at: text(row.at) }));
  }

  private async accountOf(client: pg.PoolClient, scope: HaltScope, id: string): Promise<string | null> {
    const table = scope === 'account' ? 'accounts' : scope === 'source' ? 'sources' : 'agents';
    const column = scope === 'account' ? 'id' : 'account_id';
    const { rows } = await client.query<{ account_id: string }>(
      `SELECT ${column} AS account_id FROM ${table} WHERE id = $1`,
      [id],
    );
    return rows[0]?.account_id ?? null;
  }

  private async rulesRow(client: pg.PoolClient, scope: RiskRulesScope, id: string): Promise<PgRulesRow | undefined> {
    const { rows } = await client.query<PgRulesRow>('SELECT * FROM risk_rules WHERE scope = $1 AND id = $2', [
      scope,
      id,
    ]);
    return rows[0];
  }

  private async recompute(client: pg.PoolClient, accountId: string): Promise<void> {
    const { rows } = await client.query<Pick<RiskRulesRow, 'scope' | 'id' | 'rules'>>(
      'SELECT scope, id, rules FROM risk_rules WHERE account_id = $1',
      [accountId],
    );
    const account = rows.find((row) => row.scope === 'account');
    const accountRules = account ? (JSON.parse(account.rules) as RiskRules) : null;
    for (const row of rows) {
      const own = JSON.parse(row.rules) as RiskRules;
      const effective = row.scope === 'account' ? narrowRiskRules(own, null) : narrowRiskRules(accountRules, own);
      await client.query('UPDATE risk_rules SET effective = $1 WHERE scope = $2 AND id = $3', [
        JSON.stringify(effective),
        row.scope,
        row.id,
      ]);
    }
  }

  private async haltQueued(
    client: pg.PoolClient,
    scope: HaltScope,
    targetId: string,
    accountId: string,
  ): Promise<void> {
    const notFlatten = 'NOT EXISTS (SELECT 1 FROM signals s WHERE s.id = d.signal_id AND s.flatten IS NOT NULL)';
    if (scope === 'agent') {
      await client.query(
        `UPDATE deliveries d SET status = 'halted' WHERE d.agent_id = $1 AND d.status = 'queued' AND ${notFlatten}`,
        [targetId],
      );
    } else if (scope === 'source') {
      await client.query(
        `UPDATE deliveries d SET status = 'halted'
          WHERE d.agent_id IN (SELECT id FROM agents WHERE account_id = $1) AND d.status = 'queued'
            AND d.source_id = $2 AND ${notFlatten}`,
        [accountId, targetId],
      );
    } else {
      await client.query(
        `UPDATE deliveries d SET status = 'halted'
          WHERE d.agent_id IN (SELECT id FROM agents WHERE account_id = $1) AND d.status = 'queued' AND ${notFlatten}`,
        [accountId],
      );
    }
  }

  /** As SQLite's `queueFlatten`: the log entry under a source of the account and one delivery per agent. */
  private async queueFlatten(
    client: pg.PoolClient,
    halt: NewHalt,
    accountId: string,
    when: string,
  ): Promise<QueuedFlatten | null> {
    let sourceId: string | undefined = halt.scope === 'source' ? halt.targetId : undefined;
    if (sourceId === undefined) {
      const { rows } = await client.query<{ id: string }>(
        'SELECT id FROM sources WHERE account_id = $1 ORDER BY created_at, id LIMIT 1',
        [accountId],
      );
      sourceId = rows[0]?.id;
    }
    const { rows: agents } = await client.query<{ id: string; last_seq: number }>(
      `SELECT id, last_seq FROM agents WHERE ${halt.scope === 'agent' ? 'id' : 'account_id'} = $1 ORDER BY id FOR NO KEY UPDATE`,
      [halt.scope === 'agent' ? halt.targetId : accountId],
    );
    if (sourceId === undefined || agents.length === 0) return null;
    const signalId = halt.id.replace(/^hlt_/, 'sig_');
    await client.query(
      `INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, raw_body, normalized, flatten, symbol)
       VALUES ($1, $2, $3, $4, 'queued', 202, $5, $6::json, $7, '*')`,
      [signalId, sourceId, accountId, when, Buffer.from(`flatten: ${halt.reason}`), FLATTEN_SIGNAL_JSON, halt.reason],
    );
    const expiresAt = new Date(Date.parse(when) + FLATTEN_LIFETIME_MS).toISOString();
    for (const agent of agents) {
      await client.query('UPDATE agents SET last_seq = last_seq + 1 WHERE id = $1', [agent.id]);
      await client.query(
        `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, attempts, received_at, source_id, symbol)
         VALUES ($1, $2, $3, 'queued', $4, 0, $5, $6, '*')`,
        [signalId, agent.id, agent.last_seq + 1, expiresAt, when, sourceId],
      );
    }
    return { signalId, agentIds: agents.map((agent) => agent.id) };
  }

  private async note(
    client: pg.PoolClient,
    at: string,
    actor: string,
    action: RiskAuditAction,
    scope: HaltScope,
    targetId: string,
    accountId: string,
    before: string | null,
    after: string | null,
  ): Promise<void> {
    await client.query(
      `INSERT INTO risk_audit (at, actor, action, scope, target_id, account_id, before, after)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [at, actor, action, scope, targetId, accountId, before, after],
    );
  }
}
