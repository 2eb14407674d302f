import type { AgentEntry } from '../agent-entry.js';
import type { Agent, AgentIdentity } from '../records.js';
import { isoTime, isoTimeOrNull } from '../iso-time.js';
import type { AgentFilter, DeleteAgentOutcome, RecordPage } from '../store.js';
import { recordPage } from '../record-page.js';
import type { SqliteConnection } from './connection.js';
import { GenerationCache } from './generation-cache.js';
import { newestFirst } from './newest-first.js';
import { agentEntryOf, agentIdentityOf, agentOf, jsonText, type AgentIdentityRow, type AgentRow } from './sqlite-rows.js';

/** Executing agents, their tokens and last reported state: the `agents` table. */
export class SqliteAgents {
  /** The agents found by token digest, valid while `agent_token_generation` stays where it was. */
  private readonly identities: GenerationCache<AgentIdentity>;

  constructor(private readonly connection: SqliteConnection) {
    this.identities = new GenerationCache(
      () => connection.stmt('SELECT generation FROM agent_token_generation WHERE id = 1').pluck().get() as number,
    );
  }

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

  /**
   * Every agent request is checked here. The agents found are kept in memory, and every call
   * reads the counter that triggers move in the same commit as a token's rotation, an agent's
   * deletion or rename, on any connection (the CLI's too, migration 013): a one-row read where
   * the agent's row, its reported state included, cost two to twenty times as much. So an old
   * token is refused on the first check after its rotation commits, as when every check read
   * the row. Unknown digests are not kept: they read the table each time.
   */
  findAgentByTokenHash(tokenHash: string): AgentIdentity | null {
    this.identities.refresh();
    return this.identities.get(tokenHash, () => {
      const row = this.connection.stmt('SELECT id, account_id, name, token_hash FROM agents WHERE token_hash = ?').get(tokenHash) as
        | AgentIdentityRow
        | undefined;
      return row ? Object.freeze(agentIdentityOf(row)) : null;
    });
  }

  listAgents(filter: AgentFilter): RecordPage<AgentEntry> {
    return recordPage(filter, newestFirst<AgentRow>(this.connection, 'agents', filter).map(agentEntryOf));
  }

  /** The old digest finds nothing from this commit on. */
  rotateAgentToken(agentId: string, tokenHash: string): Agent | null {
    const row = this.connection.stmt('UPDATE agents SET token_hash = ? WHERE id = ? RETURNING *').get(tokenHash, agentId) as AgentRow | undefined;
    return row ? agentOf(row) : null;
  }

  /**
   * Removes the agent and its deliveries in one commit, unless a source routes to it by id.
   * Every source of the account moves to a new revision, so a request checked against one of
   * them before this commit is checked again and routed to the agents that remain.
   */
  deleteAgent(agentId: string): DeleteAgentOutcome {
    return this.connection.db
      .transaction((): DeleteAgentOutcome => {
        const agent = this.connection.stmt('SELECT account_id FROM agents WHERE id = ?').get(agentId) as { account_id: string } | undefined;
        if (!agent) return { kind: 'not_found' };
        const routed = this.connection
          .stmt('SELECT id FROM sources WHERE account_id = ? AND EXISTS (SELECT 1 FROM json_each(sources.agent_ids) WHERE value = ?) ORDER BY id')
          .pluck()
          .all(agent.account_id, agentId) as string[];
        if (routed.length > 0) return { kind: 'routed', sourceIds: routed };
        this.connection.stmt('UPDATE sources SET revision = revision + 1 WHERE account_id = ?').run(agent.account_id);
        this.connection.stmt('DELETE FROM deliveries WHERE agent_id = ?').run(agentId);
        this.connection.stmt('DELETE FROM agents WHERE id = ?').run(agentId);
        return { kind: 'deleted' };
      })
      .immediate();
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
