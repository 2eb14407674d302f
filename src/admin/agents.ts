import { ErrorCode, type Problem } from '../errors/catalog.js';
import { digestToken } from '../security/secret-digest.js';
import { newAgentToken, newId } from '../security/random-secrets.js';
import { type AgentEntry, agentOfEntry } from '../store/agent-entry.js';
import type { RecordPage, Store } from '../store/store.js';
import { type AdminResult, notFound, refuse } from './admin-result.js';
import { FieldReader } from './field-reader.js';
import { textField } from './field-schemas.js';
import { objectSchema } from '../openapi/index.js';
import { type ListQuery, readListQuery, unknownCursor } from './list-query.js';
import { noFields } from './no-fields.js';
import { agentEntryJson, agentView } from './views.js';
import { jsonPageBody } from './json-page-body.js';

/** The body of `POST /api/admin/accounts/{id}/agents`. */
export const CREATE_AGENT_BODY = objectSchema(
  { name: textField(200, 'what the agent is called, e.g. the terminal it runs in', 'MT5 live') },
  ['name'],
);

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
  if ((await store.accounts.get(accountId)) === null) return notFound('account', accountId);
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
  await store.agents.create(agent);
  return { ok: true, value: { id: agent.id, name: agent.name, accountId, token, createdAt: agent.createdAt } };
}

export async function showAgent(store: Store, agentId: string): Promise<AdminResult<ReturnType<typeof agentView>>> {
  const agent = await store.agents.get(agentId);
  return agent === null ? notFound('agent', agentId) : { ok: true, value: agentView(agent) };
}

/** `GET /api/admin/agents[?accountId=]`: a page of agents, newest first. */
export async function listAgents(store: Store, query: ListQuery) {
  const page = await agentPage(store, query);
  if (!page.ok) return page;
  return {
    ok: true as const,
    value: { agents: page.value.items.map((entry) => agentView(agentOfEntry(entry))), next: page.value.next },
  };
}

/**
 * The same page as `listAgents`, as the JSON text the admin API answers (one Buffer when long):
 * each agent's state written as stored, not parsed and written again.
 */
export async function agentPageJson(store: Store, query: ListQuery): Promise<AdminResult<string | Buffer>> {
  const page = await agentPage(store, query);
  if (!page.ok) return page;
  return {
    ok: true,
    value: jsonPageBody(
      '{"agents":[',
      page.value.items.map(agentEntryJson),
      `],"next":${JSON.stringify(page.value.next)}}`,
    ),
  };
}

async function agentPage(store: Store, query: ListQuery): Promise<AdminResult<RecordPage<AgentEntry>>> {
  const read = readListQuery(query, ['accountId']);
  if (!read.ok) return read;
  const { limit, before, accountId } = read.value;
  const problems: Problem[] = [];
  if (accountId !== undefined && (await store.accounts.get(accountId)) === null) {
    problems.push({ code: ErrorCode.NOT_FOUND, param: 'accountId', detail: `no account with id '${accountId}'` });
  }
  if (before !== undefined && (await store.agents.get(before)) === null) problems.push(unknownCursor('agent', before));
  if (problems.length > 0) return refuse<never>(...problems);
  return {
    ok: true,
    value: await store.agents.list({
      limit,
      ...(before !== undefined && { before }),
      ...(accountId !== undefined && { accountId }),
    }),
  };
}

/**
 * `POST /api/admin/agents/{id}/rotate-token`: a new token, shown in this answer only. The old
 * one is refused from this commit on; open connections on it are closed by the delivery side.
 */
export async function rotateAgentToken(
  store: Store,
  agentId: string,
  body: unknown,
): Promise<AdminResult<ReturnType<typeof agentView> & { token: string }>> {
  const bodyProblems = noFields(body, 'rotate-token');
  if (bodyProblems.length > 0) return refuse(...bodyProblems);
  const token = newAgentToken();
  const agent = await store.agents.rotateToken(agentId, digestToken(token));
  return agent === null ? notFound('agent', agentId) : { ok: true, value: { ...agentView(agent), token } };
}

/**
 * `DELETE /api/admin/agents/{id}`: the agent, its token and its deliveries go; what it had not
 * taken yet is never handed out. Refused while a source routes to it by id.
 */
export async function deleteAgent(store: Store, agentId: string): Promise<AdminResult<null>> {
  const outcome = await store.agents.delete(agentId);
  if (outcome.kind === 'not_found') return notFound('agent', agentId);
  if (outcome.kind === 'routed') {
    return refuse({
      code: ErrorCode.AGENT_ROUTED,
      param: 'id',
      detail: `source(s) ${outcome.sourceIds.join(', ')} route to this agent by id; take it out of their agentIds first (removing it for them would route their signals to every agent of the account)`,
    });
  }
  return { ok: true, value: null };
}
