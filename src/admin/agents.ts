import { digestToken } from '../security/secret-digest.js';
import { newAgentToken, newId } from '../security/random-secrets.js';
import type { Store } from '../store/store.js';
import { type AdminResult, notFound, refuse } from './admin-result.js';
import { FieldReader } from './field-reader.js';
import { textField } from './field-schemas.js';
import { objectSchema } from '../openapi/index.js';
import { agentView } from './views.js';

/** The body of `POST /api/admin/accounts/{id}/agents`. */
export const CREATE_AGENT_BODY = objectSchema({ name: textField(200, 'what the agent is called, e.g. the terminal it runs in', 'MT5 live') }, ['name']);

/** Creates an agent of the account; its token is shown in this answer only. */
export async function createAgent(
  store: Store,
  accountId: string,
  body: unknown,
  nowMillis: number,
): Promise<AdminResult<{ id: string; name: string; accountId: string; token: string; createdAt: string }>> {
  const fields = new FieldReader(body, CREATE_AGENT_BODY);
  const name = fields.string('name');
  fields.rejectUnknown();
  if (fields.problems.length > 0 || typeof name !== 'string') return refuse(...fields.problems);
  if ((await store.getAccount(accountId)) === null) return notFound('account', accountId);
  const token = newAgentToken();
  const agent = {
    id: newId('agt'),
    accountId,
    name: name.trim(),
    tokenHash: digestToken(token),
    createdAt: new Date(nowMillis).toISOString(),
    lastSeenAt: null,
    state: null,
  };
  await store.createAgent(agent);
  return { ok: true, value: { id: agent.id, name: agent.name, accountId, token, createdAt: agent.createdAt } };
}

export async function showAgent(store: Store, agentId: string): Promise<AdminResult<ReturnType<typeof agentView>>> {
  const agent = await store.getAgent(agentId);
  return agent === null ? notFound('agent', agentId) : { ok: true, value: agentView(agent) };
}
