import type { IncomingMessage, Server } from 'node:http';
import { CoalescedWrites } from '../protocol/coalesced-writes.js';
import type { Duplex } from 'node:stream';
import { ErrorCode, type Problem, statusOf } from '../errors/catalog.js';
import { inboundKeyInPath } from '../inbound/inbound-url.js';
import { rawProblemAnswer } from '../http-kit/raw-problem-answer.js';
import { STORE_RETRY_AFTER_SECONDS, STORE_UNAVAILABLE } from '../http-kit/server-problems.js';
import { isStoreUnavailable } from '../store/store-unavailable.js';
import { maskPath } from '../logging/logger.js';
import { WebSocket, WebSocketServer } from 'ws';
import { AGENT_TOKEN_PROBLEM, authenticateAgent } from './agent-authenticator.js';
import type { AgentSessions, SessionSlot } from './agent-sessions.js';
import type { AgentIdentity } from '../store/records.js';
import type { AgentSessionClaim } from '../store/store.js';
import {
  AGENT_CONNECTED_REASON,
  CLOSE_AGENT_CONNECTED,
  CLOSE_GOING_AWAY,
  CLOSE_INTERNAL_ERROR,
  PUSH_PATH,
} from '../protocol/push-protocol.js';
import { type PushDependencies, PushSession } from './push-session.js';
import { MAX_JSON_BODY_BYTES } from '../http-kit/json-body-limits.js';

/** A connection that answered no ping for this long is dead (e.g. a vanished NAT mapping). */
const HEARTBEAT_MS = 15_000;
/** Agents get this long to answer the going-away close before their sockets are cut. */
const CLOSE_GRACE_MS = 1_000;

/**
 * The WebSocket transport, on the HTTP server's `upgrade` event. The token is checked before
 * the upgrade: a wrong or missing one gets a plain 401 problem answer and no socket.
 */
export class PushServer {
  /**
   * A message (a frame, or the frames of a fragmented message together) beyond the body limit
   * closes the connection with 1009 (`CLOSE_MESSAGE_TOO_BIG`) as it arrives: ws neither buffers
   * nor decodes more of it.
   */
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: MAX_JSON_BODY_BYTES });
  private readonly alive = new WeakMap<WebSocket, boolean>();
  private readonly heartbeat: NodeJS.Timeout;
  private closing = false;

  constructor(
    server: Server,
    private readonly deps: PushDependencies,
    private readonly sessions: AgentSessions,
  ) {
    server.on(
      'upgrade',
      (request: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(request, socket, head),
    );
    this.heartbeat = setInterval(() => this.checkAlive(), HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  private async upgrade(request: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => socket.destroy());
    // An upgrade is a request too: it gets its access line, like every other.
    const logAccess = (statusCode: number) =>
      this.deps.logger.info({ method: request.method, url: maskPath(request.url ?? '/'), statusCode }, 'request');
    const refused = (problem: Problem, headers: Record<string, string> = {}) => {
      if (!socket.destroyed) socket.end(rawProblemAnswer(problem, statusOf(problem.code), headers));
      logAccess(statusOf(problem.code));
    };
    const path = (request.url ?? '/').split('?')[0];
    if (path !== PUSH_PATH) {
      // node:http hands every request with an Upgrade header here, never to the routes: the
      // inbound URL answers what it would without the header, as far as that needs no body.
      if (inboundKeyInPath(request.url) === null) {
        return refused({
          code: ErrorCode.NOT_FOUND,
          detail: `no WebSocket endpoint at ${path}; agents connect to ${PUSH_PATH}`,
        });
      }
      if (request.method !== 'POST')
        return refused({ code: ErrorCode.METHOD_NOT_ALLOWED, detail: 'send signals with POST' }, { Allow: 'POST' });
      return refused({
        code: ErrorCode.INVALID_REQUEST,
        param: 'Upgrade',
        detail:
          'this server does not switch protocols: send the signal as a plain HTTP/1.1 POST without an Upgrade header (curl: leave out --http2 on http:// URLs)',
      });
    }
    if (this.closing)
      return refused({ code: ErrorCode.SHUTTING_DOWN, detail: 'the server is shutting down; reconnect shortly' });
    let agent;
    try {
      agent = await authenticateAgent(this.deps.store, bearer(request.headers.authorization));
    } catch (err) {
      this.deps.logger.error({ err }, 'agent lookup failed during WebSocket upgrade');
      if (isStoreUnavailable(err))
        return refused(STORE_UNAVAILABLE, { 'Retry-After': String(STORE_RETRY_AFTER_SECONDS) });
      return refused({
        code: ErrorCode.INTERNAL_ERROR,
        detail: 'the server could not check the token; reconnect shortly',
      });
    }
    if (agent === null) return refused(AGENT_TOKEN_PROBLEM);
    if (this.closing || socket.destroyed)
      return refused({ code: ErrorCode.SHUTTING_DOWN, detail: 'the server is shutting down' });
    this.wss.handleUpgrade(request, socket, head, (ws) => {
      logAccess(101);
      this.alive.set(ws, true);
      ws.on('pong', () => this.alive.set(ws, true));
      ws.on('error', (err) => this.deps.logger.warn({ err, agentId: agent.id }, 'agent WebSocket error'));
      // Refuse the newcomer rather than replace the session: the session in place may have
      // executed signals it has not acknowledged yet, which a replacement would be handed again.
      // Refused after the upgrade, with a close code, so every WebSocket client can read why.
      const slot = this.sessions.claim(agent.id, ws);
      if (slot === null) return this.refuseSecond(ws, agent.id);
      // A long-poll of this agent waiting meanwhile must answer 409 now, not take signals.
      this.deps.board.wake(agent.id, 'connected');
      void this.start(ws, agent, slot, new CoalescedWrites(socket));
    });
  }

  /** Claims the session against other processes on the same database too, then starts it. */
  private async start(ws: WebSocket, agent: AgentIdentity, slot: SessionSlot, writes: CoalescedWrites): Promise<void> {
    // A session of this agent that just closed here may still be giving its store hold back.
    await slot.earlier;
    let claim: AgentSessionClaim | null;
    try {
      claim = await this.deps.store.deliveries.claimSession(agent.id, agent.tokenHash);
    } catch (err) {
      slot.releaseOnClose(async () => undefined);
      this.deps.logger.error({ err, agentId: agent.id }, 'could not claim the push session; closing the connection');
      ws.close(CLOSE_INTERNAL_ERROR, 'store failure; reconnect');
      return;
    }
    if (claim === null) {
      slot.releaseOnClose(async () => undefined);
      return this.refuseSecond(ws, agent.id);
    }
    const held = claim;
    slot.releaseOnClose(() =>
      held
        .release()
        .catch((err: unknown) =>
          this.deps.logger.warn({ err, agentId: agent.id }, 'could not release the push session'),
        ),
    );
    if (ws.readyState !== WebSocket.OPEN) return;
    claim.onLost(() => {
      this.deps.logger.error(
        { agentId: agent.id },
        'lost the hold on the push session (database connection broke); closing the connection',
      );
      ws.close(CLOSE_INTERNAL_ERROR, 'store failure; reconnect');
    });
    ws.on('close', (code) => this.deps.logger.info({ agentId: agent.id, code }, 'agent disconnected'));
    this.deps.logger.info({ agentId: agent.id }, 'agent connected over WebSocket');
    new PushSession(ws, agent, claim, this.deps, writes).start();
  }

  private refuseSecond(ws: WebSocket, agentId: string): void {
    this.deps.logger.warn(
      { agentId, code: ErrorCode.AGENT_CONNECTED },
      'refused a second WebSocket for an agent already connected: two processes share its token',
    );
    ws.close(CLOSE_AGENT_CONNECTED, AGENT_CONNECTED_REASON);
  }

  private checkAlive(): void {
    for (const ws of this.wss.clients) {
      if (this.alive.get(ws) === false) {
        ws.terminate();
        continue;
      }
      this.alive.set(ws, false);
      ws.ping();
    }
  }

  /** Closes every connection with 1001 (going away); cuts those that do not close within a second. */
  async close(): Promise<void> {
    this.closing = true;
    clearInterval(this.heartbeat);
    const sockets = [...this.wss.clients];
    await Promise.all(
      sockets.map(
        (ws) =>
          new Promise<void>((resolve) => {
            if (ws.readyState === WebSocket.CLOSED) return resolve();
            const timer = setTimeout(() => ws.terminate(), CLOSE_GRACE_MS);
            ws.once('close', () => {
              clearTimeout(timer);
              resolve();
            });
            ws.close(CLOSE_GOING_AWAY, 'server shutting down; reconnect');
          }),
      ),
    );
    await new Promise<void>((resolve) => this.wss.close(() => resolve()));
  }
}

function bearer(header: string | undefined): string | null {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return match ? match[1]! : null;
}
