import type pg from 'pg';
import type { AgentEntry } from '../agent-entry.js';
import type { Agent, AgentIdentity } from '../records.js';
import { isoTime, isoTimeOrNull } from '../iso-time.js';
import type { AgentFilter, Agents, DeleteAgentOutcome } from '../agents.js';
import { recordPage, type RecordPage } from '../record-page.js';
import { DELIVERY_CHANNEL, deliveryPayloads } from './delivery-channel.js';
import { newestFirst } from './newest-first.js';
import {
  AGENT_ENTRY_COLUMNS,
  agentColumnsSql,
  agentEntryOf,
  agentIdentityOf,
  agentOf,
  jsonParam,
  type AgentEntryRow,
  type AgentIdentityRow,
  type AgentRow,
} from './postgres-rows.js';
import type { ItemResult } from '../item-result.js';
import { Batches } from './batches.js';
import { inTransaction } from './transaction.js';

/** At most this many token lookups, or presence writes, go to the database in one statement. */
const MAX_AGENT_BATCH = 500;
/** A presence write that finds the agent's row locked (an ingest numbering its deliveries) tries again this often, this many times. */
const TOUCH_ATTEMPTS = 5;
const TOUCH_RETRY_MS = 20;
/** SQLSTATE foreign_key_violation: the agent the snapshot is of is gone. */
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Executing agents, their tokens and last reported state: the `agents` table. What the agents
 * themselves cause (the token lookup of each request, presence, state) runs on the delivery
 * pool (`deliveryPool`), the rest on the main pool. Token lookups and presence writes of one
 * event-loop turn share one statement each: in a burst, 200 agents acknowledging 5,000 signals
 * by HTTP made 7,000 lookups and 4,000 presence writes, each a query (the writes a commit) of
 * its own.
 */
export class PostgresAgents implements Agents {
  private readonly lookups: Batches<string, AgentIdentity | null>;
  private readonly touches: Batches<{ agentId: string; now: string }, boolean>;

  constructor(
    private readonly pool: pg.Pool,
    private readonly deliveryPool: pg.Pool,
    /** Whose notifications these are: the schema and this instance (see delivery-channel.ts). */
    private readonly notices: { scope: () => string; instance: string },
    /** Wakes this instance's watchers of deliveries of the agents, so their open sessions look again. */
    private readonly notify: (agentIds: string[]) => void,
  ) {
    this.lookups = new Batches((hashes) => this.lookUp(hashes), { maxBatch: MAX_AGENT_BATCH, maxInFlight: 1 });
    this.touches = new Batches((touches) => this.touchAll(touches), { maxBatch: MAX_AGENT_BATCH, maxInFlight: 1 });
  }

  async create(agent: Agent): Promise<void> {
    await this.pool.query(
      `INSERT INTO agents (id, account_id, name, token_hash, created_at, last_seen_at, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        agent.id,
        agent.accountId,
        agent.name,
        agent.tokenHash,
        isoTime(agent.createdAt),
        isoTimeOrNull(agent.lastSeenAt),
        jsonParam(agent.state),
      ],
    );
  }

  async get(id: string): Promise<Agent | null> {
    const { rows } = await this.pool.query<AgentRow>(`SELECT ${agentColumnsSql('a')} FROM agents a WHERE a.id = $1`, [
      id,
    ]);
    return rows[0] ? agentOf(rows[0]) : null;
  }

  /** Reads the database every time (nothing is cached, so a rotated token stops at once); the lookups of a turn share one query. */
  findByTokenHash(tokenHash: string): Promise<AgentIdentity | null> {
    return this.lookups.submit(tokenHash);
  }

  private async lookUp(hashes: string[]): Promise<ItemResult<AgentIdentity | null>[]> {
    // The identity's columns only: an agent's reported state can be large, and no check needs it.
    const { rows } = await this.deliveryPool.query<AgentIdentityRow>({
      name: 'signalgate-find-agent-identities',
      text: 'SELECT id, account_id, name, token_hash FROM agents WHERE token_hash = ANY ($1::text[])',
      values: [[...new Set(hashes)]],
    });
    const found = new Map(rows.map((row) => [row.token_hash, row]));
    return hashes.map((hash) => {
      const row = found.get(hash);
      return { ok: true, value: row ? agentIdentityOf(row) : null };
    });
  }

  async list(filter: AgentFilter): Promise<RecordPage<AgentEntry>> {
    return recordPage(
      filter,
      (await newestFirst<AgentEntryRow>(this.pool, 'agents', filter, AGENT_ENTRY_COLUMNS)).map(agentEntryOf),
    );
  }

  /**
   * The old digest finds nothing from this commit on; the other instances hear of the agent at
   * the commit (their open sessions look again and close).
   */
  async rotateToken(agentId: string, tokenHash: string): Promise<Agent | null> {
    const row = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<AgentRow>(
        `UPDATE agents a SET token_hash = $1 WHERE a.id = $2 RETURNING ${agentColumnsSql('a')}`,
        [tokenHash, agentId],
      );
      if (rows[0]) await this.tellOthers(client, [agentId]);
      return rows[0] ?? null;
    });
    if (row === null) return null;
    // This instance's open sessions look again and close: the old token takes nothing more.
    this.notify([agentId]);
    return agentOf(row);
  }

  /**
   * Removes the agent and its deliveries in one commit, unless a source routes to it by id.
   * Every source of the account is locked and moves to a new revision, so a request checked
   * against one of them before this commit is checked again and routed to the agents that remain.
   */
  async delete(agentId: string): Promise<DeleteAgentOutcome> {
    let outcome: DeleteAgentOutcome;
    try {
      outcome = await inTransaction(this.pool, async (client): Promise<DeleteAgentOutcome> => {
        const { rows } = await client.query<{ account_id: string }>(
          'SELECT account_id FROM agents WHERE id = $1 FOR UPDATE',
          [agentId],
        );
        const agent = rows[0];
        if (!agent) return { kind: 'not_found' };
        const { rows: sources } = await client.query<{ id: string; routed: boolean }>(
          `UPDATE sources SET revision = revision + 1 WHERE account_id = $1
           RETURNING id, EXISTS (SELECT 1 FROM json_array_elements_text(agent_ids) AS a WHERE a = $2) AS routed`,
          [agent.account_id, agentId],
        );
        const routed = sources.filter((s) => s.routed).map((s) => s.id);
        // Thrown, so the revisions moved above roll back: nothing changes.
        if (routed.length > 0) throw new RoutedAgent(routed.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
        await client.query('DELETE FROM deliveries WHERE agent_id = $1', [agentId]);
        await client.query('DELETE FROM agents WHERE id = $1', [agentId]);
        await this.tellOthers(client, [agentId]);
        return { kind: 'deleted' };
      });
    } catch (error) {
      if (error instanceof RoutedAgent) return { kind: 'routed', sourceIds: error.sourceIds };
      throw error;
    }
    if (outcome.kind === 'deleted') this.notify([agentId]);
    return outcome;
  }

  /** Wakes the watchers of `agentIds` in the other instances on this database, at the transaction's commit. */
  private async tellOthers(client: pg.PoolClient, agentIds: string[]): Promise<void> {
    for (const payload of deliveryPayloads(this.notices.scope(), this.notices.instance, agentIds)) {
      await client.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, payload]);
    }
  }

  /**
   * The snapshot goes to `agent_states`, not the agent's row, which the ingests queueing for the
   * agent hold locked (migration 025); that it was seen goes the way of any presence (`touch`).
   * An agent deleted meanwhile has no row to refer to: its snapshot is dropped with it.
   */
  async saveState(agentId: string, state: unknown, now: string): Promise<void> {
    try {
      await this.deliveryPool.query({
        name: 'signalgate-save-agent-state',
        text: `INSERT INTO agent_states (agent_id, state, saved_at) VALUES ($1, $2, $3)
               ON CONFLICT (agent_id) DO UPDATE SET state = EXCLUDED.state, saved_at = EXCLUDED.saved_at`,
        values: [agentId, jsonParam(state), isoTime(now)],
      });
    } catch (error) {
      if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) return;
      throw error;
    }
    await this.touch(agentId, now);
  }

  /**
   * Presence is advisory and must never hold up an ingest, which locks the agents' rows to
   * number their deliveries: the write skips a row locked at that moment. The caller (whose
   * answer waits for this) waits for the first try only; a skipped write is tried again a few
   * turns later in the background, then left for the agent's next request.
   */
  async touch(agentId: string, now: string): Promise<void> {
    const touch = { agentId, now: isoTime(now) };
    if (await this.touches.submit(touch)) return;
    void (async () => {
      for (let attempt = 2; attempt <= TOUCH_ATTEMPTS; attempt++) {
        await new Promise((resolve) => setTimeout(resolve, TOUCH_RETRY_MS));
        if (await this.touches.submit(touch)) return;
      }
    })().catch(() => undefined);
  }

  /**
   * One UPDATE for the turn's presence writes; an agent seen twice keeps the later time, as does
   * one whose write was retried after a later one. Answers whether each was written.
   */
  private async touchAll(touches: { agentId: string; now: string }[]): Promise<ItemResult<boolean>[]> {
    const latest = new Map<string, string>();
    for (const { agentId, now } of touches) {
      const seen = latest.get(agentId);
      if (seen === undefined || Date.parse(now) > Date.parse(seen)) latest.set(agentId, now);
    }
    const { rows } = await this.deliveryPool.query<{ id: string }>({
      name: 'signalgate-touch-agents',
      text: `WITH t AS (SELECT * FROM unnest($1::text[], $2::timestamptz[]) AS t (id, seen_at)),
                  free AS (SELECT g.id FROM agents g JOIN t ON t.id = g.id FOR NO KEY UPDATE OF g SKIP LOCKED)
             UPDATE agents a SET last_seen_at = GREATEST(a.last_seen_at, t.seen_at)
               FROM t JOIN free ON free.id = t.id
              WHERE a.id = t.id
             RETURNING a.id`,
      values: [[...latest.keys()], [...latest.values()]],
    });
    const written = new Set(rows.map((row) => row.id));
    return touches.map((touch) => ({ ok: true, value: written.has(touch.agentId) }));
  }
}

/** Ends a deletion's transaction (rolled back) when a source routes to the agent by id. */
class RoutedAgent extends Error {
  constructor(readonly sourceIds: string[]) {
    super('a source routes to the agent');
  }
}
