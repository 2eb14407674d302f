import { ErrorCode } from '../errors/catalog.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { bearerToken } from '../http-kit/bearer-token.js';
import { sendProblem } from '../http-kit/send-problem.js';
import type { WrongTokens } from '../http-kit/wrong-tokens.js';
import { crossOrigin } from './dashboard-routes.js';
import { SESSION_COOKIE, type DashboardSessions } from './dashboard-sessions.js';
import { sameOriginOrSafe } from './same-origin.js';

export interface AdminAccessOptions {
  isAdminToken: (token: string) => boolean;
  sessions: DashboardSessions;
  publicUrl: string;
  wrongTokens: WrongTokens;
}

/**
 * Who may call the admin API: a client presenting the admin token as a bearer token, or the
 * dashboard signed in (its session cookie), whose state-changing requests must also come from
 * the dashboard's own origin. Answers the refusal, or undefined to let the request through.
 */
export async function checkAdminAccess(
  request: FastifyRequest,
  reply: FastifyReply,
  opts: AdminAccessOptions,
): Promise<FastifyReply | undefined> {
  const token = bearerToken(request);
  if (token !== null) {
    const refused = opts.wrongTokens.refuse(request, reply, 'admin', 'Authorization');
    if (refused !== undefined) return refused;
    if (opts.isAdminToken(token)) {
      actors.set(request, 'admin token');
      return undefined;
    }
    opts.wrongTokens.wrong(request, 'admin');
    return unauthorized(reply);
  }
  const session = await opts.sessions.find(request.cookies[SESSION_COOKIE], Date.now());
  if (session === null) return unauthorized(reply);
  if (!sameOriginOrSafe(request, opts.publicUrl)) return crossOrigin(reply);
  // Named by the start of its id's digest: enough to tell sessions apart, nothing to sign in with.
  actors.set(request, `dashboard session ${session.idDigest.slice(0, 12)}`);
  return undefined;
}

const actors = new WeakMap<FastifyRequest, string>();

/**
 * Who made an admin request that `checkAdminAccess` let through, as the risk audit log names
 * them: `admin token`, or `dashboard session <digest start>`.
 */
export function adminActor(request: FastifyRequest): string {
  return actors.get(request) ?? 'admin token';
}

function unauthorized(reply: FastifyReply): FastifyReply {
  return sendProblem(reply, [
    {
      code: ErrorCode.UNAUTHORIZED,
      detail: 'send the admin token as Authorization: Bearer <token>',
      param: 'Authorization',
    },
  ]);
}
