import type { AgentEntry } from './agent-entry.js';
import type { PageRequest, RecordPage } from './record-page.js';
import type { Agent, AgentIdentity } from './records.js';

/** The agents that execute signals, their tokens' digests, presence and latest state. */
export interface Agents {
  create(agent: Agent): Promise<void>;
  get(id: string): Promise<Agent | null>;
  /** Read afresh on every call as far as a rotation, a deletion or a rename is concerned: never a stale identity. */
  findByTokenHash(tokenHash: string): Promise<AgentIdentity | null>;
  /** Agents (of one account, or all), newest first, a page at a time, each state as its stored JSON text. */
  list(filter: AgentFilter): Promise<RecordPage<AgentEntry>>;
  /**
   * Gives the agent a new token digest; null when no such agent. The old token is refused from
   * this commit on, and the agent's watchers of deliveries (every process) are woken, so open
   * sessions on the old token see the change and close.
   */
  rotateToken(agentId: string, tokenHash: string): Promise<Agent | null>;
  /**
   * Removes the agent with its deliveries (so nothing queued for it is ever handed out), unless
   * a source routes to it by id: removing it from that list would widen the source's routing to
   * every agent of the account. Wakes its watchers as `rotateToken` does.
   */
  delete(agentId: string): Promise<DeleteAgentOutcome>;
  /** Records the agent's latest account snapshot and that it was seen at `now`. */
  saveState(agentId: string, state: unknown, now: string): Promise<void>;
  touch(agentId: string, now: string): Promise<void>;
}

export interface AgentFilter extends PageRequest {
  accountId?: string;
}

export type DeleteAgentOutcome =
  | { kind: 'deleted' }
  | { kind: 'not_found' }
  /** Sources that route to the agent by id: take it out of their agentIds first. */
  | { kind: 'routed'; sourceIds: string[] };
