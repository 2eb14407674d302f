import type { AgentEntry } from '../agent-entry.js';
import type { Agent, AgentIdentity } from '../records.js';
import { isoTime, isoTimeOrNull } from '../iso-time.js';
import type { AgentFilter, Agents, DeleteAgentOutcome } from '../agents.js';
import { recordPage, type RecordPage } from '../record-page.js';
import type { SqliteConnection } from './connection.js';
import type { DurableReads } from './durable-reads.js';
import { GenerationCache } from './generation-cache.js';
import { newestFirst } from './newest-first.js';
import {
  agentEntryOf,
  agentIdentityOf,
  agentOf,
  jsonText,
  type AgentIdentityRow,
  type AgentRow,
} from './sqlite-rows.js';
import type { SqliteWriteGroup } from './write-group.js';

/** Executing agents, their tokens and last reported state: the `agents` table. */
export class SqliteAgents implements Agents {
  /** The agents found by token digest, valid while `agent_token_generation` stays where it was. */
  private readonly identities: GenerationCache<AgentIdentity>;

  constructor(
    private readonly connection: SqliteConnection,
    /** Presence and state are group-committed with the other agent writes of their turn. */
    private readonly writes: SqliteWriteGroup,
    /** The state and last-seen time read are answered once on disk, as the agent's writes are. */
    private readonly reads: DurableReads,
    private readonly changed: {
      /** Drops the sources cached by key: a deletion moved their revisions. */
      forgetSources: () => void;
      /** Wakes the agents' watchers of deliveries, so their open sessions look again. */
      notify: (agentIds: string[]) => void;
    },
  ) {
    this.identities = new GenerationCache(
      () => connection.stmt('SELECT generation FROM agent_token_generation WHERE id = 1').pluck().get() as number,
    );
  }

  async create(agent: Agent): Promise<void> {
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

  async get(id: string): Promise<Agent | null> {
    const row = (await this.reads.read(() => this.connection.stmt('SELECT * FROM agents WHERE id = ?').get(id))) as
      AgentRow | undefined;
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
  async findByTokenHash(tokenHash: string): Promise<AgentIdentity | null> {
    this.identities.refresh();
    return this.identities.get(tokenHash, () => {
      const row = this.connection
        .stmt('SELECT id, account_id, name, token_hash FROM agents WHERE token_hash = ?')
        .get(tokenHash) as AgentIdentityRow | undefined;
      return row ? Object.freeze(agentIdentityOf(row)) : null;
    });
  }

  async list(filter: AgentFilter): Promise<RecordPage<AgentEntry>> {
    const rows = await this.reads.read(() => newestFirst<AgentRow>(this.connection, 'agents', filter));
    return recordPage(filter, rows.map(agentEntryOf));
  }

  /** The old digest finds nothing from this commit on. */
  async rotateToken(agentId: string, tokenHash: string): Promise<Agent | null> {
    const row = this.connection
      .stmt('UPDATE agents SET token_hash = ? WHERE id = ? RETURNING *')
      .get(tokenHash, agentId) as AgentRow | undefined;
    if (!row) return null;
    // Its open sessions look again and close: the old token takes nothing more.
    this.changed.notify([agentId]);
    return agentOf(row);
  }

  /**
   * Removes the agent and its deliveries in one commit, unless a source routes to it by id.
   * Every source of the account moves to a new revision, so a request checked against one of
   * them before this commit is checked again and routed to the agents that remain.
   */
  async delete(agentId: string): Promise<DeleteAgentOutcome> {
    const outcome = this.connection.db
      .transaction((): DeleteAgentOutcome => {
        const agent = this.connection.stmt('SELECT account_id FROM agents WHERE id = ?').get(agentId) as
          { account_id: string } | undefined;
        if (!agent) return { kind: 'not_found' };
        const routed = this.connection
          .stmt(
            'SELECT id FROM sources WHERE account_id = ? AND EXISTS (SELECT 1 FROM json_each(sources.agent_ids) WHERE value = ?) ORDER BY id',
          )
          .pluck()
          .all(agent.account_id, agentId) as string[];
        if (routed.length > 0) return { kind: 'routed', sourceIds: routed };
        this.connection.stmt('UPDATE sources SET revision = revision + 1 WHERE account_id = ?').run(agent.account_id);
        this.connection.stmt('DELETE FROM deliveries WHERE agent_id = ?').run(agentId);
        this.connection.stmt('DELETE FROM agents WHERE id = ?').run(agentId);
        return { kind: 'deleted' };
      })
      .immediate();
    if (outcome.kind === 'deleted') {
      this.changed.forgetSources();
      this.changed.notify([agentId]);
    }
    return outcome;
  }

  async saveState(agentId: string, state: unknown, now: string): Promise<void> {
    await this.writes.run(() => {
      this.connection
        .stmt('UPDATE agents SET state = ?, last_seen_at = ? WHERE id = ?')
        .run(jsonText(state), isoTime(now), agentId);
    });
  }

  async touch(agentId: string, now: string): Promise<void> {
    await this.writes.run(() => {
      this.connection.stmt('UPDATE agents SET last_seen_at = ? WHERE id = ?').run(isoTime(now), agentId);
    });
  }
}
