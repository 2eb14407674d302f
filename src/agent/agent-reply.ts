import type { ProblemBody } from '../errors/problem-body.js';
import type { Delivery } from '../protocol/delivery.js';
import { ErrorCode } from '../errors/catalog.js';

/** The server's answer to an ack or a state update, whichever transport carried it. */
export interface AgentReply {
  /** HTTP status (the WebSocket `result` message carries the same). */
  status: number;
  body: unknown;
}

/**
 * The settled outcome of an acknowledgement: recorded (also when it repeats an earlier one),
 * or refused for good (409 ALREADY_ACKNOWLEDGED with another status, 409 SIGNAL_EXPIRED or
 * SIGNAL_NOT_DELIVERED, 404 NOT_FOUND, 4xx for a malformed ack).
 */
export type AckAnswer = { ok: true; delivery: Delivery } | { ok: false; status: number; problem: ProblemBody };

/** The server's 409 AGENT_CONNECTED: another connection holds this agent's WebSocket session. */
export function isAgentConnected(reply: AgentReply): boolean {
  return reply.status === 409 && (reply.body as { code?: unknown } | null)?.code === ErrorCode.AGENT_CONNECTED;
}

/**
 * The server's 400 for a WebSocket message `type` it does not know (`param: 'type'`): a server
 * older than the message, which still takes the same report over HTTP.
 */
export function isUnknownType(reply: AgentReply): boolean {
  const problem = reply.body as { code?: unknown; param?: unknown } | null;
  return reply.status === 400 && problem?.code === ErrorCode.INVALID_REQUEST && problem.param === 'type';
}
