import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { PROBLEM_CONTENT_TYPE } from '../errors/problem-body.js';
import { unknownNames } from '../errors/unknown-names.js';
import { bearerToken } from '../http/bearer-token.js';
import { sendProblem } from '../http/send-problem.js';
import type { Agent } from '../store/records.js';
import type { Store } from '../store/store.js';
import { acknowledgeSignal } from './acknowledge-signal.js';
import type { AgentAnswer } from './agent-answer.js';
import { AGENT_TOKEN_PROBLEM, authenticateAgent } from './agent-authenticator.js';
import { AgentPresence } from './agent-presence.js';
import { AGENT_CONNECTED_PROBLEM, AgentSessions } from './agent-sessions.js';
import { DeliveryBoard } from './delivery-board.js';
import { longPoll, MAX_WAIT_SECONDS, readWaitSeconds } from './long-poll.js';
import { PushServer } from './push-server.js';
import { saveAgentState } from './save-agent-state.js';
import { ErrorCode } from '../errors/catalog.js';

const POLL_PATH = '/api/agent/signals';

export interface DeliveryOptions {
  store: Store;
  logger: Logger;
}

/**
 * Delivery to agents (CONTRACT §6): long-poll, acks and state over HTTP, and the WebSocket
 * push transport. On close, waiting polls answer at once and sockets get 1001 (going away),
 * so a draining server is not held up by its agents.
 */
export function deliveryPlugin(opts: DeliveryOptions): (app: FastifyInstance) => Promise<void> {
  return async (app) => {
    const { store, logger } = opts;
    const board = new DeliveryBoard(store);
    const presence = new AgentPresence(store, logger);
    const sessions = new AgentSessions();
    const push = new PushServer(app.server, { store, board, presence, logger }, sessions);
    const agents = new WeakMap<FastifyRequest, Agent>();

    app.addHook('preClose', async () => {
      board.close();
      await push.close();
    });

    // Runs before the body is read, so a request without a valid token learns that first.
    app.addHook('onRequest', async (request, reply) => {
      const agent = await authenticateAgent(store, bearerToken(request));
      if (agent === null) return sendProblem(reply, [AGENT_TOKEN_PROBLEM]);
      // Refused, not ignored: a mistyped `wiat=30` would turn a connector's poll into a busy loop.
      const unknown = unknownNames(Object.keys(request.query as object), request.routeOptions.url === POLL_PATH ? ['wait'] : [], 'query parameter');
      if (unknown.length > 0) return sendProblem(reply, unknown);
      agents.set(request, agent);
    });
    const agentOf = (request: FastifyRequest): Agent => agents.get(request)!;

    // Who this token belongs to, with no other effect: an agent checks its token here before it
    // creates anything on disk.
    app.get('/api/agent', async (request, reply) => {
      const agent = agentOf(request);
      return reply.send({ id: agent.id, name: agent.name, accountId: agent.accountId });
    });

    app.get<{ Querystring: { wait?: string } }>(POLL_PATH, async (request, reply) => {
      const agent = agentOf(request);
      const seconds = readWaitSeconds(request.query.wait);
      if (seconds === null) {
        return sendProblem(reply, [
          { code: ErrorCode.INVALID_REQUEST, param: 'wait', detail: `'wait' must be a number of seconds from 0 to ${MAX_WAIT_SECONDS}` },
        ]);
      }
      const gone = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) gone.abort();
      });
      // One agent, one receiver: a poll beside an open WebSocket session would hand the same
      // signals to a second process.
      if (sessions.holds(agent.id)) return sendProblem(reply, [AGENT_CONNECTED_PROBLEM]);
      const [signals] = await Promise.all([
        longPoll(store, board, agent.id, seconds * 1000, gone.signal, () => sessions.holds(agent.id), async () => {
          const current = await store.getAgent(agent.id);
          return current !== null && current.tokenHash === agent.tokenHash;
        }),
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

    app.post<{ Params: { id: string } }>('/api/agent/signals/:id/ack', async (request, reply) => {
      const agent = agentOf(request);
      const [answer] = await Promise.all([
        acknowledgeSignal(store, logger, agent.id, request.params.id, request.body, Date.now()),
        presence.seen(agent.id),
      ]);
      if (answer.ok) board.wake(agent.id, 'acked');
      return send(reply, answer);
    });

    app.put('/api/agent/state', async (request, reply) => {
      const agent = agentOf(request);
      // The session's process owns the dashboard's account; a second process sharing the token
      // would overwrite it with its own. Its acks stay accepted: they report what already happened.
      if (sessions.holds(agent.id) || (await store.agentSessionOpenElsewhere(agent.id))) {
        return sendProblem(reply, [AGENT_CONNECTED_PROBLEM]);
      }
      const now = Date.now();
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
