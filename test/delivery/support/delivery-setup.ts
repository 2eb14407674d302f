import type { TestServer } from '../../support/start-test-server.js';
import { unlessUnavailable } from '../../support/unless-unavailable.js';

export interface TestAgent {
  id: string;
  name: string;
  token: string;
}

/** An account with the named agents, created through the admin API. */
export async function accountWithAgents(
  server: TestServer,
  names: string[],
  quota = 100_000,
): Promise<{ accountId: string; agents: TestAgent[] }> {
  const account = await unlessUnavailable(() =>
    server.admin('POST', '/api/admin/accounts', { name: 'Trader', monthlySignalQuota: quota }),
  );
  if (account.status !== 201) throw new Error(`account: ${account.status} ${JSON.stringify(account.body)}`);
  const agents: TestAgent[] = [];
  for (const name of names) {
    const agent = await unlessUnavailable(() =>
      server.admin('POST', `/api/admin/accounts/${account.body.id}/agents`, { name }),
    );
    if (agent.status !== 201) throw new Error(`agent: ${agent.status} ${JSON.stringify(agent.body)}`);
    agents.push({ id: agent.body.id, name, token: agent.body.token });
  }
  return { accountId: account.body.id, agents };
}

/** A source of the account; answers its id and auth key. */
export async function sourceFor(
  server: TestServer,
  accountId: string,
  opts: { agentIds?: string[]; maxSignalAgeSeconds?: number; duplicateWindowSeconds?: number } = {},
): Promise<{ id: string; authKey: string }> {
  const source = await unlessUnavailable(() =>
    server.admin('POST', '/api/admin/sources', { accountId, name: 'Alerts', ...opts }),
  );
  if (source.status !== 201) throw new Error(`source: ${source.status} ${JSON.stringify(source.body)}`);
  return { id: source.body.id, authKey: source.body.authKey };
}

/** Posts one text signal to the inbound endpoint; answers the accepted signal's id (throws unless 202). */
export async function postSignal(url: string, authKey: string, text: string): Promise<string> {
  const { status, body } = await unlessUnavailable(async () => {
    const res = await fetch(`${url}/api/inbound/${authKey}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: text,
    });
    return { status: res.status, body: (await res.json()) as any };
  });
  if (status !== 202) throw new Error(`inbound: ${status} ${JSON.stringify(body)}`);
  return body.id as string;
}

export interface AgentResponse {
  status: number;
  contentType: string | null;
  body: any;
}

/** A request to the agent API with the given bearer token (none when null). */
export async function agentRequest(
  url: string,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<AgentResponse> {
  const res = await fetch(url + path, {
    method,
    headers: {
      ...(token !== null && { authorization: `Bearer ${token}` }),
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, contentType: res.headers.get('content-type'), body: text ? JSON.parse(text) : null };
}

/** The deliveries of a signal, as the admin signal record shows them. */
export async function deliveriesOf(server: TestServer, signalId: string): Promise<any[]> {
  const record = await server.admin('GET', `/api/admin/signals/${signalId}`);
  if (record.status !== 200) throw new Error(`signal ${signalId}: ${record.status}`);
  return record.body.deliveries as any[];
}

/** The signal's deliveries once the first has a final status (from one read, so no two reads can straddle a change). */
export async function settledDeliveriesOf(server: TestServer, signalId: string, what: string): Promise<any[]> {
  let deliveries: any[] = [];
  await waitUntil(
    async () => !['queued', 'delivered'].includes((deliveries = await deliveriesOf(server, signalId))[0].status),
    what,
  );
  return deliveries;
}

/** Checks `condition` until it holds; fails with `what` after `timeoutMs`. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
