import type { FastifyInstance, FastifyReply } from 'fastify';
import { accountUsage, createAccount, showAccount, updateAccount } from '../admin/accounts.js';
import type { AdminResult } from '../admin/admin-result.js';
import { createAgent, showAgent } from '../admin/agents.js';
import { listSignals, type SignalQuery, showSignal } from '../admin/signals.js';
import { createSource, rotateSourceKey, showSource, updateSource } from '../admin/sources.js';
import { listeningPublicUrl } from '../config/listening-public-url.js';
import type { Store } from '../store/store.js';
import { bearerToken } from './bearer-token.js';
import { useStrictJsonBodies } from './json-body-parser.js';
import { sendProblem } from './send-problem.js';
import { ErrorCode } from '../errors/catalog.js';

export interface AdminRouteOptions {
  store: Store;
  /** SIGNALGATE_PUBLIC_URL or `http://HOST:PORT`; a port 0 there becomes the port the server got. */
  publicUrl: string;
  /** Whether a presented bearer token is the admin token. */
  isAdminToken: (token: string) => boolean;
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

  app.addHook('onRequest', async (request, reply) => {
    const token = bearerToken(request);
    if (token === null || !opts.isAdminToken(token)) {
      return sendProblem(reply, [
        { code: ErrorCode.UNAUTHORIZED, detail: 'send the admin token as Authorization: Bearer <token>', param: 'Authorization' },
      ]);
    }
  });

  type Id = { Params: { id: string } };
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
  });
  app.get<{ Querystring: SignalQuery }>('/api/admin/signals', async (req, reply) =>
    answer(reply, await listSignals(store, req.query)),
  );
  app.get<Id>('/api/admin/signals/:id', async (req, reply) => answer(reply, await showSignal(store, req.params.id)));
}

function answer<T>(reply: FastifyReply, result: AdminResult<T>, status = 200): FastifyReply {
  if (!result.ok) return sendProblem(reply, result.problems);
  return reply.code(status).send(result.value);
}
