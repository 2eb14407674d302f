import type { Agent } from '../records.js';
import { isoTime, isoTimeOrNull } from '../iso-time.js';
import type { SqliteConnection } from './connection.js';
import { agentOf, jsonText, type AgentRow } from './sqlite-rows.js';

/** Executing agents, their tokens and last reported state: the `agents` table. */
export class SqliteAgents {
  constructor(private readonly connection: SqliteConnection) {}

  createAgent(agent: Agent): void {
    this.connection
      .stmt(
        `INSERT INTO agents (id, account_id, name, token_hash, created_at, last_seen_at, state)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        agent.id,
        agent.accountId,
        agent.name,
        agent.tokenHash,
        isoTime(agent.createdAt),
        isoTimeOrNull(agent.lastSeenAt),
        jsonText(agent.state),
      );
  }

  getAgent(id: string): Agent | null {
    const row = this.connection.stmt('SELECT * FROM agents WHERE id = ?').get(id) as AgentRow | undefined;
    return row ? agentOf(row) : null;
  }

  findAgentByTokenHash(tokenHash: string): Agent | null {
    const row = this.connection.stmt('SELECT * FROM agents WHERE token_hash = ?').get(tokenHash) as
      | AgentRow
      | undefined;
    return row ? agentOf(row) : null;
  }

  listAgents(accountId: string): Agent[] {
    const rows = this.connection
      .stmt('SELECT * FROM agents WHERE account_id = ? ORDER BY created_at, id')
      .all(accountId) as AgentRow[];
    return rows.map(agentOf);
  }

  saveAgentState(agentId: string, state: unknown, now: string): void {
    this.connection
      .stmt('UPDATE agents SET state = ?, last_seen_at = ? WHERE id = ?')
      .run(jsonText(state), isoTime(now), agentId);
  }

  touchAgent(agentId: string, now: string): void {
    this.connection.stmt('UPDATE agents SET last_seen_at = ? WHERE id = ?').run(isoTime(now), agentId);
  }
}
