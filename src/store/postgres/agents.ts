import type pg from 'pg';
import type { Agent } from '../records.js';
import { isoTime, isoTimeOrNull } from '../iso-time.js';
import type { AgentFilter, DeleteAgentOutcome, RecordPage } from '../store.js';
import { recordPage } from '../record-page.js';
import { DELIVERY_CHANNEL, deliveryPayloads } from './delivery-channel.js';
import { newestFirst } from './newest-first.js';
import { agentOf, jsonParam, type AgentRow } from './postgres-rows.js';
import { inTransaction } from './transaction.js';

/** Executing agents, their tokens and last reported state: the `agents` table. */
export class PostgresAgents {
  constructor(
    private readonly pool: pg.Pool,
    /** Whose notifications these are: the schema and this instance (see delivery-channel.ts). */
    private readonly notices: { scope: () => string; instance: string },
  ) {}

  async createAgent(agent: Agent): Promise<void> {
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

  async getAgent(id: string): Promise<Agent | null> {
    const { rows } = await this.pool.query<AgentRow>('SELECT * FROM agents WHERE id = $1', [id]);
    return rows[0] ? agentOf(rows[0]) : null;
  }

  async findAgentByTokenHash(tokenHash: string): Promise<Agent | null> {
    const { rows } = await this.pool.query<AgentRow>('SELECT * FROM agents WHERE token_hash = $1', [tokenHash]);
    return rows[0] ? agentOf(rows[0]) : null;
  }

  async listAgents(filter: AgentFilter): Promise<RecordPage<Agent>> {
    return recordPage(filter, (await newestFirst<AgentRow>(this.pool, 'agents', filter)).map(agentOf));
  }

  /**
   * The old digest finds nothing from this commit on; the other instances hear of the agent at
   * the commit (their open sessions look again and close).
   */
  async rotateAgentToken(agentId: string, tokenHash: string): Promise<Agent | null> {
    const row = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<AgentRow>('UPDATE agents SET token_hash = $1 WHERE id = $2 RETURNING *', [tokenHash, agentId]);
      if (rows[0]) await this.tellOthers(client, [agentId]);
      return rows[0] ?? null;
    });
    return row === null ? null : agentOf(row);
  }

  /**
   * Removes the agent and its deliveries in one commit, unless a source routes to it by id.
   * Every source of the account is locked and moves to a new revision, so a request checked
   * against one of them before this commit is checked again and routed to the agents that remain.
   */
  async deleteAgent(agentId: string): Promise<DeleteAgentOutcome> {
    try {
      return await inTransaction(this.pool, async (client): Promise<DeleteAgentOutcome> => {
        const { rows } = await client.query<{ account_id: string }>('SELECT account_id FROM agents WHERE id = $1 FOR UPDATE', [agentId]);
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
  }

  /** Wakes the watchers of `agentIds` in the other instances on this database, at the transaction's commit. */
  private async tellOthers(client: pg.PoolClient, agentIds: string[]): Promise<void> {
    for (const payload of deliveryPayloads(this.notices.scope(), this.notices.instance, agentIds)) {
      await client.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, payload]);
    }
  }

  async saveAgentState(agentId: string, state: unknown, now: string): Promise<void> {
    await this.pool.query('UPDATE agents SET state = $1, last_seen_at = $2 WHERE id = $3', [
      jsonParam(state),
      isoTime(now),
      agentId,
    ]);
  }

  async touchAgent(agentId: string, now: string): Promise<void> {
    await this.pool.query('UPDATE agents SET last_seen_at = $1 WHERE id = $2', [isoTime(now), agentId]);
  }
}

/** Ends a deletion's transaction (rolled back) when a source routes to the agent by id. */
class RoutedAgent extends Error {
  constructor(readonly sourceIds: string[]) {
    super('a source routes to the agent');
  }
}
