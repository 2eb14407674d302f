import type { Agent } from './records.js';

/**
 * An agent as a page of the agents' list reads it: its published account state still the JSON
 * text stored. Both stores write that text with `JSON.stringify` alone (an agent's state report,
 * an agent's creation), so a page can carry it as it is: at about a kilobyte a state, parsing
 * 500 of them only to write them again was most of a full page's time
 * (docs/decisions/0010-admin-page-encoding.md).
 */
export type AgentEntry = Omit<Agent, 'tokenHash' | 'state'> & {
  /** The published state's JSON text, as stored; null when the agent has published none. */
  stateJson: string | null;
};

/** The entry with its state parsed: the agent as the admin API shows one. */
export function agentOfEntry(entry: AgentEntry): Omit<Agent, 'tokenHash'> {
  return {
    id: entry.id,
    accountId: entry.accountId,
    name: entry.name,
    createdAt: entry.createdAt,
    lastSeenAt: entry.lastSeenAt,
    state: entry.stateJson === null ? null : (JSON.parse(entry.stateJson) as unknown),
  };
}
