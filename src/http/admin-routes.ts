import type { FastifyInstance, FastifyReply } from 'fastify';
import { accountUsage, createAccount, dailyUsage, listAccounts, showAccount, updateAccount } from '../admin/accounts.js';
import type { AdminResult } from '../admin/admin-result.js';
import { createAgent, deleteAgent, listAgents, rotateAgentToken, showAgent } from '../admin/agents.js';
import type { ListQuery } from '../admin/list-query.js';
import { listSignals, type SignalQuery, showSignal } from '../admin/signals.js';
import { createSource, deleteSource, listSources, rotateSourceKey, showSource, updateSource } from '../admin/sources.js';
import { listeningPublicUrl } from '../config/listening-public-url.js';
import type { Store } from '../store/store.js';
import { checkSignal } from '../admin/check-signal.js';
import { checkAdminAccess } from '../dashboard/admin-access.js';
import type { DashboardSessions } from '../dashboard/dashboard-sessions.js';
import { SignalStreams } from '../dashboard/signal-stream.js';
import { useStrictJsonBodies } from './json-body-parser.js';
import { sendProblem } from './send-problem.js';

export interface AdminRouteOptions {
  store: Store;
  /** SIGNALGATE_PUBLIC_URL or `http://HOST:PORT`; a port 0 there becomes the port the server got. */
  publicUrl: string;
  /** Whether a presented bearer token is the admin token. */
  isAdminToken: (token: string) => boolean;
  /** Dashboard sign-ins, which the admin API takes in place of the bearer token. */
  sessions: DashboardSessions;
}

/** The admin API of CONTRACT §2, behind the admin bearer token. */
export async function adminRoutes(app: FastifyInstance, opts: AdminRouteOptions): Promise<void> {
  const { store } = opts;
  // Read once the server listens (admin requests only come then), when its port is known.
  let rendered: string | null = null;
  const publicUrl = (): string => {
    if (rendered !== null) return rendered;
    const address = app.server.address();
    if (typeof address !== 'object' || address === null) return opts.publicUrl;
    rendered = listeningPublicUrl(opts.publicUrl, address.port);
    return rendered;
  };

  const access = { isAdminToken: opts.isAdminToken, sessions: opts.sessions, publicUrl: opts.publicUrl };
  app.addHook('onRequest', async (request, reply) => checkAdminAccess(request, reply, access));
  const streams = new SignalStreams(store);
  app.addHook('preClose', async () => streams.closeAll());

  type Id = { Params: { id: string } };
  type List = { Querystring: ListQuery };
  app.get<List>('/api/admin/accounts', async (req, reply) => answer(reply, await listAccounts(store, req.query)));
  app.get<List>('/api/admin/sources', async (req, reply) => answer(reply, await listSources(store, req.query, publicUrl())));
  app.get<List>('/api/admin/agents', async (req, reply) => answer(reply, await listAgents(store, req.query)));
  app.get<Id & List>('/api/admin/accounts/:id/usage/daily', async (req, reply) =>
    answer(reply, await dailyUsage(store, req.params.id, req.query, Date.now())),
  );
  app.delete<Id>('/api/admin/sources/:id', async (req, reply) => answer(reply, await deleteSource(store, req.params.id), 204));
  app.delete<Id>('/api/admin/agents/:id', async (req, reply) => answer(reply, await deleteAgent(store, req.params.id), 204));
  app.post('/api/admin/accounts', async (req, reply) => answer(reply, await createAccount(store, req.body, Date.now()), 201));
  app.get<Id>('/api/admin/accounts/:id', async (req, reply) => answer(reply, await showAccount(store, req.params.id)));
  app.patch<Id>('/api/admin/accounts/:id', async (req, reply) => answer(reply, await updateAccount(store, req.params.id, req.body)));
  app.get<Id>('/api/admin/accounts/:id/usage', async (req, reply) =>
    answer(reply, await accountUsage(store, req.params.id, Date.now())),
  );
  app.post<Id>('/api/admin/accounts/:id/agents', async (req, reply) =>
    answer(reply, await createAgent(store, req.params.id, req.body, Date.now()), 201),
  );
  app.get<Id>('/api/admin/agents/:id', async (req, reply) => answer(reply, await showAgent(store, req.params.id)));
  app.post('/api/admin/sources', async (req, reply) =>
    answer(reply, await createSource(store, req.body, Date.now(), publicUrl()), 201),
  );
  app.get<Id>('/api/admin/sources/:id', async (req, reply) => answer(reply, await showSource(store, req.params.id, publicUrl())));
  app.patch<Id>('/api/admin/sources/:id', async (req, reply) =>
    answer(reply, await updateSource(store, req.params.id, req.body, publicUrl())),
  );
  // In a scope of its own: its JSON parser takes an empty body, which the other routes refuse.
  await app.register(async (scope) => {
    useStrictJsonBodies(scope, { emptyIsNoBody: true });
    scope.post<Id>('/api/admin/sources/:id/rotate-key', async (req, reply) =>
      answer(reply, await rotateSourceKey(store, req.params.id, req.body, publicUrl())),
    );
    scope.post<Id>('/api/admin/agents/:id/rotate-token', async (req, reply) => answer(reply, await rotateAgentToken(store, req.params.id, req.body)));
  });
  app.get<{ Querystring: SignalQuery }>('/api/admin/signals', async (req, reply) =>
    answer(reply, await listSignals(store, req.query)),
  );
  app.get<{ Querystring: SignalQuery }>('/api/admin/signals/stream', async (req, reply) => streams.serve(req, reply));
  app.post('/api/admin/check', async (req, reply) => answer(reply, checkSignal(req.body)));
  app.get<Id>('/api/admin/signals/:id', async (req, reply) => answer(reply, await showSignal(store, req.params.id)));
}

function answer<T>(reply: FastifyReply, result: AdminResult<T>, status = 200): FastifyReply {
  if (!result.ok) return sendProblem(reply, result.problems);
  if (status === 204) return reply.code(204).send();
  return reply.code(status).send(result.value);
}
