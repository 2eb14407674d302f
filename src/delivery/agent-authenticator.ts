import { ErrorCode, type Problem } from '../errors/catalog.js';
import { digestToken } from '../security/secret-digest.js';
import type { AgentIdentity } from '../store/records.js';
import type { Store } from '../store/store.js';

/** The problem every agent request without a valid token gets (401). */
export const AGENT_TOKEN_PROBLEM: Problem = {
  code: ErrorCode.UNAUTHORIZED,
  detail: "send the agent's token as Authorization: Bearer <token>; it is shown once, when the agent is created",
  param: 'Authorization',
};

/**
 * Finds the agent a presented token belongs to. Tokens are stored as digests only, so the
 * lookup is by digest; every request and every connection is checked against the store, which
 * never answers with a rotated token or a removed agent, so either loses access at once.
 */
export async function authenticateAgent(store: Store, token: string | null): Promise<AgentIdentity | null> {
  if (token === null || token === '') return null;
  return store.agents.findByTokenHash(digestToken(token));
}
