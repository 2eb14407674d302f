import { objectSchema, type RouteDescription } from '../openapi/index.js';
import { ErrorCode } from '../errors/catalog.js';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { FieldReader } from '../admin/field-reader.js';
import { sendProblem } from '../http-kit/send-problem.js';
import type { WrongTokens } from '../http-kit/wrong-tokens.js';
import { SESSION_COOKIE, type DashboardSessions } from './dashboard-sessions.js';
import { sameOriginOrSafe } from './same-origin.js';
import { setDashboardHeaders } from './security-headers.js';

/** The dashboard's own files (HTML, script modules, style sheets), shipped beside the code. */
const WEB_ROOT = fileURLToPath(new URL('../../web/', import.meta.url));
/** uPlot as npm installed it; only its module and style sheet are served. */
const UPLOT_ROOT = path.dirname(createRequire(import.meta.url).resolve('uplot'));
const UPLOT_FILES = new Set(['/uPlot.esm.js', '/uPlot.min.css']);

export interface DashboardRouteOptions {
  sessions: DashboardSessions;
  isAdminToken: (token: string) => boolean;
  /** SIGNALGATE_PUBLIC_URL or `http://HOST:PORT`: an Origin it names is this server. */
  publicUrl: string;
  /** Wrong admin tokens typed at sign-in, counted per client address. */
  wrongTokens: WrongTokens;
}

/**
 * The operator's dashboard at `/`: its page and assets, and sign-in and sign-out. Everything it
 * shows or changes goes through the admin API, which takes the session cookie in place of the
 * bearer token.
 */
export async function dashboardRoutes(app: FastifyInstance, opts: DashboardRouteOptions): Promise<void> {
  const { sessions } = opts;
  app.addHook('onSend', async (_request, reply, payload) => {
    setDashboardHeaders(reply);
    return payload;
  });

  await app.register(fastifyStatic, {
    root: WEB_ROOT,
    prefix: '/dashboard/',
    index: false,
    wildcard: true,
    cacheControl: false,
  });
  app.addHook('onSend', async (request, reply, payload) => {
    // Assets are small and change with every release: revalidated each time (ETag), never stale.
    if (request.url.startsWith('/dashboard/')) reply.header('cache-control', 'no-cache');
    return payload;
  });
  await app.register(fastifyStatic, {
    root: UPLOT_ROOT,
    prefix: '/dashboard/vendor/uplot/',
    decorateReply: false,
    index: false,
    cacheControl: false,
    allowedPath: (pathName) => UPLOT_FILES.has(pathName),
  });

  app.get('/', async (_request, reply) => reply.header('cache-control', 'no-store').sendFile('index.html'));

  app.get('/api/dashboard/session', { config: { api: SESSION_STATE } }, async (request, reply) => {
    // Answered 200 either way: the page asks this first, and "not signed in" is no error.
    const session = await sessions.find(request.cookies[SESSION_COOKIE], Date.now());
    reply.header('cache-control', 'no-store');
    return session === null ? { signedIn: false } : { signedIn: true, expiresAt: session.expiresAt };
  });

  app.post('/api/dashboard/session', { config: { api: SIGN_IN } }, async (request, reply) => {
    // The body is read first (reading changes nothing), so a malformed one is answered as on every
    // route; the Origin check still comes before the token is even looked at.
    const fields = new FieldReader(request.body, SIGN_IN_BODY);
    const token = fields.string('token');
    fields.rejectUnknown();
    if (fields.problems.length > 0 || typeof token !== 'string') return sendProblem(reply, fields.problems);
    if (!sameOriginOrSafe(request, opts.publicUrl)) return crossOrigin(reply);
    const refused = opts.wrongTokens.refuse(request, reply, 'dashboard_sign_in', 'token');
    if (refused !== undefined) return refused;
    if (!opts.isAdminToken(token)) {
      opts.wrongTokens.wrong(request, 'dashboard_sign_in');
      return sendProblem(reply, [
        {
          code: ErrorCode.UNAUTHORIZED,
          param: 'token',
          detail: 'that is not the admin token; type the admin token the server was started with',
        },
      ]);
    }
    const session = await sessions.start(Date.now());
    reply.setCookie(SESSION_COOKIE, session.id, {
      path: '/',
      httpOnly: true,
      sameSite: 'strict',
      // Secure whenever the browser came over HTTPS: then it never sends the cookie in clear.
      secure: requestOrigin(request)?.startsWith('https:') === true,
      expires: session.expiresAt,
    });
    return reply
      .header('cache-control', 'no-store')
      .code(201)
      .send({ signedIn: true, expiresAt: session.expiresAt.toISOString() });
  });

  app.delete('/api/dashboard/session', { config: { api: SIGN_OUT } }, async (request, reply) => {
    if (!sameOriginOrSafe(request, opts.publicUrl)) return crossOrigin(reply);
    await sessions.end(request.cookies[SESSION_COOKIE]);
    reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict' });
    return reply.code(204).send();
  });
}

const SESSION = objectSchema(
  {
    signedIn: { type: 'boolean' },
    expiresAt: { type: 'string', format: 'date-time', description: 'when the sign-in ends' },
  },
  ['signedIn'],
);
const SIGN_IN_BODY = objectSchema(
  { token: { type: 'string', minLength: 1, maxLength: 1000, description: 'the admin token' } },
  ['token'],
);
const SESSION_STATE: RouteDescription = {
  summary: "Whether this browser's dashboard is signed in (its session cookie)",
  tag: 'admin',
  auth: 'none',
  answers: { 200: { description: 'Signed in or not; not signed in is no error', schema: SESSION } },
  problems: [],
};
const SIGN_IN: RouteDescription = {
  summary: 'Sign the dashboard in with the admin token: sets an HttpOnly SameSite=Strict session cookie',
  tag: 'admin',
  auth: 'none',
  body: { schema: SIGN_IN_BODY, required: true },
  answers: { 201: { description: 'Signed in', schema: SESSION } },
  problems: [
    ErrorCode.UNAUTHORIZED,
    ErrorCode.TOO_MANY_WRONG_TOKENS,
    ErrorCode.CROSS_ORIGIN,
    ErrorCode.INVALID_REQUEST,
    ErrorCode.INVALID_FIELD,
    ErrorCode.PAYLOAD_TOO_LARGE,
    ErrorCode.UNSUPPORTED_MEDIA_TYPE,
  ],
};
const SIGN_OUT: RouteDescription = {
  summary: 'Sign the dashboard out: ends the session and clears its cookie',
  tag: 'admin',
  auth: 'none',
  answers: { 204: { description: 'Signed out' } },
  problems: [ErrorCode.CROSS_ORIGIN],
};

function requestOrigin(request: FastifyRequest): string | undefined {
  const origin = request.headers.origin;
  return typeof origin === 'string' ? origin : undefined;
}

export function crossOrigin(reply: FastifyReply): FastifyReply {
  return sendProblem(reply, [
    {
      code: ErrorCode.CROSS_ORIGIN,
      param: 'Origin',
      detail:
        "a request signed in by the dashboard's cookie must come from the dashboard's own page (its Origin header must name this server)",
    },
  ]);
}
