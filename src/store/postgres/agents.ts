import type pg from 'pg';
import type { Agent } from '../records.js';
import { isoTime, isoTimeOrNull } from '../iso-time.js';
import { agentOf, jsonParam, type AgentRow } from './postgres-rows.js';

/** Executing agents, their tokens and last reported state: the `agents` table. */
export class PostgresAgents {
  constructor(private readonly pool: pg.Pool) {}

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

  async listAgents(accountId: string): Promise<Agent[]> {
    const { rows } = await this.pool.query<AgentRow>(
      'SELECT * FROM agents WHERE account_id = $1 ORDER BY created_at, id',
      [accountId],
    );
    return rows.map(agentOf);
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
