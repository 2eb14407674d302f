import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { PROBLEM_CONTENT_TYPE } from '../errors/problem-body.js';
import { unknownNames } from '../errors/unknown-names.js';
import { bearerToken } from '../http-kit/bearer-token.js';
import { sendProblem } from '../http-kit/send-problem.js';
import type { AgentIdentity } from '../store/records.js';
import type { Store } from '../store/store.js';
import { ACK_BODY, acknowledgeSignal } from './acknowledge-signal.js';
import type { AgentAnswer } from './agent-answer.js';
import { AGENT_TOKEN_PROBLEM, authenticateAgent } from './agent-authenticator.js';
import { AgentPresence } from './agent-presence.js';
import { AGENT_CONNECTED_PROBLEM, AgentSessions } from './agent-sessions.js';
import { DeliveryBoard } from './delivery-board.js';
import { MAX_WAIT_SECONDS } from '../protocol/long-poll-wait.js';
import { longPoll, readWaitSeconds } from './long-poll.js';
import { PUSH_PATH } from '../protocol/push-protocol.js';
import { PushServer } from './push-server.js';
import { AGENT_STATE_BODY, saveAgentState } from './save-agent-state.js';
import { FILLS_BODY, recordFills } from './record-fills.js';
import { FILLS_PATH } from '../protocol/ledger-report.js';
import { ErrorCode } from '../errors/catalog.js';
import { objectSchema, type RouteDescription } from '../openapi/index.js';
import { logExpiredDeliveries } from './expiry-log.js';
import type { Notifier } from '../notifications/notifier.js';
import { tellRiskHalted } from '../notifications/risk-events.js';
import type { Halt } from '../store/risk.js';
import { DeliveryAlerts } from './delivery-alerts.js';
import { AGENT_HALT_BODY, reportAgentHalt } from './agent-halt.js';

const POLL_PATH = '/api/agent/signals';

/** The poll's query; its names are the ones the poll takes. */
const POLL_QUERY = objectSchema({
  wait: {
    type: 'number',
    minimum: 0,
    maximum: MAX_WAIT_SECONDS,
    default: 0,
    description: 'seconds to hold the request open when nothing is pending (long-poll)',
  },
});
const POLL_PARAMETERS = Object.keys(POLL_QUERY.properties);

const AGENT_PROBLEMS = [ErrorCode.UNAUTHORIZED, ErrorCode.INVALID_REQUEST, ErrorCode.AGENT_CONNECTED];
const DELIVERY = {
  type: 'object' as const,
  description: 'the delivery as recorded: status, times, message and result',
};

const WHOAMI: RouteDescription = {
  summary: 'The agent this token belongs to',
  description: 'Changes nothing: an agent checks its token with it before it starts.',
  tag: 'agent',
  auth: 'agent',
  answers: {
    200: {
      description: 'The agent',
      schema: objectSchema({ id: { type: 'string' }, name: { type: 'string' }, accountId: { type: 'string' } }, [
        'id',
        'name',
        'accountId',
      ]),
    },
  },
  problems: [ErrorCode.UNAUTHORIZED, ErrorCode.INVALID_REQUEST],
};
const POLL: RouteDescription = {
  summary: "Take this agent's pending signals",
  description:
    'Oldest first; with none pending, waits up to wait seconds for one. Acknowledge each after acting on it.',
  tag: 'agent',
  auth: 'agent',
  query: POLL_QUERY,
  answers: {
    200: {
      description: 'The pending signals (possibly none)',
      schema: objectSchema(
        { signals: { type: 'array', items: { type: 'object', description: 'a signal with its id and expiry' } } },
        ['signals'],
      ),
    },
  },
  problems: AGENT_PROBLEMS,
};
const ACK: RouteDescription = {
  summary: 'Acknowledge a signal',
  description: 'Repeating the same acknowledgement answers 200 again; a different one for a settled signal is refused.',
  tag: 'agent',
  auth: 'agent',
  params: { id: { type: 'string', description: 'the signal id' } },
  body: { schema: ACK_BODY, required: true },
  answers: { 200: { description: 'The delivery as acknowledged', schema: DELIVERY } },
  problems: [
    ...AGENT_PROBLEMS,
    ErrorCode.INVALID_FIELD,
    ErrorCode.NOT_FOUND,
    ErrorCode.ALREADY_ACKNOWLEDGED,
    ErrorCode.SIGNAL_EXPIRED,
    ErrorCode.SIGNAL_NOT_DELIVERED,
  ],
};
const PUSH: RouteDescription = {
  summary: 'Open the WebSocket push session',
  description:
    "A WebSocket upgrade (Upgrade: websocket), answered on the server's upgrade event rather than by a route. Signals are pushed as they are committed; acknowledgements and state go back on the socket. One session per agent: a second is closed with 4409. The messages are described in the agents' guide.",
  tag: 'agent',
  auth: 'agent',
  answers: { 101: { description: 'Switching Protocols: the session is open' } },
  problems: [ErrorCode.UNAUTHORIZED, ErrorCode.SHUTTING_DOWN, ErrorCode.INTERNAL_ERROR],
};
const STATE: RouteDescription = {
  summary: "Record the agent's account snapshot",
  tag: 'agent',
  auth: 'agent',
  body: { schema: AGENT_STATE_BODY, required: true },
  answers: {
    200: {
      description: 'Recorded',
      schema: objectSchema({ savedAt: { type: 'string', format: 'date-time' } }, ['savedAt']),
    },
  },
  problems: [...AGENT_PROBLEMS, ErrorCode.INVALID_FIELD],
};

const HALT: RouteDescription = {
  summary: "Halt the agent's account: it reached a loss rule (maxDailyLoss, maxTotalLoss)",
  description:
    'Audited with the agent as who. Signals to the account are then answered and logged as halted until an operator releases it.',
  tag: 'agent',
  auth: 'agent',
  body: { schema: AGENT_HALT_BODY, required: true },
  answers: {
    201: { description: 'Halted', schema: { type: 'object', description: '{halt, alreadyHalted: false}' } },
    200: {
      description: 'Halted already: the halt in force',
      schema: { type: 'object', description: '{halt, alreadyHalted: true}' },
    },
  },
  problems: [...AGENT_PROBLEMS, ErrorCode.INVALID_FIELD, ErrorCode.NOT_FOUND],
};

const FILLS: RouteDescription = {
  summary: "Report the venue's fills, funding payments and busts for the ledger",
  description:
    "Each keyed by the venue's own id (a bust by the id of the fill it took back): one this agent reported before is left as it was and counted known, so a report sent again after a lost answer or a restart records nothing twice; a bust of more lots of the same fill replaces the earlier one. At most 100 entries per report.",
  tag: 'agent',
  auth: 'agent',
  body: { schema: FILLS_BODY, required: true },
  answers: {
    200: {
      description: 'Recorded (committed before the answer)',
      schema: objectSchema({ recorded: { type: 'integer' }, known: { type: 'integer' } }, ['recorded', 'known']),
    },
  },
  problems: [...AGENT_PROBLEMS, ErrorCode.INVALID_FIELD],
};

export interface DeliveryOptions {
  store: Store;
  logger: Logger;
  /** Told of rejected, failed and expired deliveries, agents gone and back, and agents' reports. */
  notifier?: Notifier | null;
  /** An agent unseen this long is told disconnected. */
  agentOfflineMs?: number;
  /** Whether this instance is the notifications' watcher (holds the watch lease); default always. */
  watching?: () => boolean;
}

/**
 * Delivery to agents (docs/agents.md): long-poll, acks and state over HTTP, and the WebSocket
 * push transport. On close, waiting polls answer at once and sockets get 1001 (going away),
 * so a draining server is not held up by its agents.
 */
export function deliveryPlugin(opts: DeliveryOptions): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    const { store, logger } = opts;
    const board = new DeliveryBoard(store);
    const presence = new AgentPresence(store, logger);
    const sessions = new AgentSessions();
    const alerts = opts.notifier
      ? new DeliveryAlerts(store, opts.notifier, logger, opts.agentOfflineMs ?? 120_000, opts.watching)
      : null;
    alerts?.startPresenceWatch();
    const push = new PushServer(app.server, { store, board, presence, logger, alerts }, sessions);
    const agents = new WeakMap<FastifyRequest, AgentIdentity>();
    app.routeCatalog.answeredOutsideRouter({ method: 'GET', url: PUSH_PATH, api: PUSH });
    const stopExpiryLog = store.deliveries.watchExpiries((expired) => {
      logExpiredDeliveries(logger, expired);
      alerts?.expired(expired);
    });

    app.addHook('preClose', async () => {
      stopExpiryLog();
      alerts?.stop();
      board.close();
      await push.close();
    });

    // Runs before the body is read, so a request without a valid token learns that first.
    app.addHook('onRequest', async (request, reply) => {
      const agent = await authenticateAgent(store, bearerToken(request));
      if (agent === null) return sendProblem(reply, [AGENT_TOKEN_PROBLEM]);
      // Refused, not ignored: a mistyped `wiat=30` would turn a connector's poll into a busy loop.
      const unknown = unknownNames(
        Object.keys(request.query as object),
        request.routeOptions.url === POLL_PATH ? POLL_PARAMETERS : [],
        'query parameter',
      );
      if (unknown.length > 0) return sendProblem(reply, unknown);
      agents.set(request, agent);
    });
    const agentOf = (request: FastifyRequest): AgentIdentity => agents.get(request)!;

    // Who this token belongs to, with no other effect: an agent checks its token here before it
    // creates anything on disk.
    app.get('/api/agent', { config: { api: WHOAMI } }, async (request, reply) => {
      const agent = agentOf(request);
      return reply.send({ id: agent.id, name: agent.name, accountId: agent.accountId });
    });

    app.get<{ Querystring: { wait?: string } }>(POLL_PATH, { config: { api: POLL } }, async (request, reply) => {
      const agent = agentOf(request);
      const seconds = readWaitSeconds(request.query.wait);
      if (seconds === null) {
        return sendProblem(reply, [
          {
            code: ErrorCode.INVALID_REQUEST,
            param: 'wait',
            detail: `'wait' must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}`,
          },
        ]);
      }
      const gone = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      // One agent, one receiver: a poll beside an open WebSocket session would hand the same
      // signals to a second process.
      if (sessions.holds(agent.id)) return sendProblem(reply, [AGENT_CONNECTED_PROBLEM]);
      // A session of the agent that closed here just now may still hold it in the store.
      await sessions.settled(agent.id);
      const [signals] = await Promise.all([
        longPoll(
          store,
          board,
          agent.id,
          seconds * 1000,
          gone.signal,
          () => sessions.holds(agent.id),
          async () => {
            // By digest, like the request's own lookup, which the store batches per turn.
            const current = await store.agents.findByTokenHash(agent.tokenHash);
            return current !== null && current.id === agent.id;
          },
        ),
        presence.seen(agent.id),
      ]);
      if (gone.signal.aborted) {
        // The client hung up mid-wait: nobody reads an answer, and the half-closed socket
        // would otherwise stay open and hold up the server's close.
        reply.hijack();
        request.raw.socket.destroy();
        return reply;
      }
      if (signals === null) return sendProblem(reply, [AGENT_CONNECTED_PROBLEM]);
      return reply.send({ signals });
    });

    app.post<{ Params: { id: string } }>(
      '/api/agent/signals/:id/ack',
      { config: { api: ACK } },
      async (request, reply) => {
        const agent = agentOf(request);
        const [answer] = await Promise.all([
          acknowledgeSignal(store, logger, agent.id, request.params.id, request.body, Date.now(), alerts),
          presence.seen(agent.id),
        ]);
        if (answer.ok) board.wake(agent.id, 'acked');
        return send(reply, answer);
      },
    );

    app.post('/api/agent/halt', { config: { api: HALT } }, async (request, reply) => {
      const agent = agentOf(request);
      const [answer] = await Promise.all([
        reportAgentHalt(store, agent, request.body, Date.now()),
        presence.seen(agent.id),
      ]);
      const taken = answer.ok ? (answer.body as { halt: Halt; alreadyHalted: boolean }) : null;
      if (taken && !taken.alreadyHalted && opts.notifier) {
        // The reason names the rule, its limit and the value reached, in the agent's words.
        tellRiskHalted(opts.notifier, {
          accountId: taken.halt.accountId,
          target: { type: 'account', id: taken.halt.targetId },
          reason: taken.halt.reason,
          by: taken.halt.haltedBy,
          at: taken.halt.haltedAt,
        });
      }
      return send(reply, answer);
    });

    // Not held to the session: fills are facts of the venue, whichever process saw them reports them.
    app.post(FILLS_PATH, { config: { api: FILLS } }, async (request, reply) => {
      const agent = agentOf(request);
      const [answer] = await Promise.all([
        recordFills(store, agent, request.body, Date.now()),
        presence.seen(agent.id),
      ]);
      return send(reply, answer);
    });

    app.put('/api/agent/state', { config: { api: STATE } }, async (request, reply) => {
      const agent = agentOf(request);
      // The session's process owns the dashboard's account; a second process sharing the token
      // would overwrite it with its own. Its acks stay accepted: they report what already happened.
      if (sessions.holds(agent.id)) return sendProblem(reply, [AGENT_CONNECTED_PROBLEM]);
      await sessions.settled(agent.id);
      if (await store.deliveries.sessionOpenElsewhere(agent.id)) {
        return sendProblem(reply, [AGENT_CONNECTED_PROBLEM]);
      }
      const now = Date.now();
      await alerts?.stateReported(agent.id, request.body);
      const answer = await saveAgentState(store, agent.id, request.body, now);
      if (answer.ok) presence.recorded(agent.id, now);
      else await presence.seen(agent.id);
      return send(reply, answer);
    });
  };
}

function send(reply: FastifyReply, answer: AgentAnswer): FastifyReply {
  if (answer.ok) return reply.code(answer.status).send(answer.body);
  return reply.code(answer.status).header('content-type', PROBLEM_CONTENT_TYPE).send(answer.body);
}
