import { ErrorCode } from '../errors/catalog.js';
import type { ProblemBody } from '../errors/problem-body.js';
import type { AgentSignal } from './agent-signal.js';
import type { AckTimings } from './delivery.js';
import type { LedgerReport } from './ledger-report.js';

/**
 * The WebSocket protocol at `GET /api/agent/ws` (token in `Authorization: Bearer`). Every
 * message is one JSON object with a `type`. It carries the same records and acknowledgements
 * as the HTTP endpoints; `result.status` and `result.body` are what the HTTP endpoint would
 * have answered.
 */
export const PUSH_PATH = '/api/agent/ws';

/** Close codes the server uses. */
export const CLOSE_GOING_AWAY = 1001;
export const CLOSE_INTERNAL_ERROR = 1011;
/**
 * The agent already has an open session (another process on the same token): sent right
 * after the upgrade, before anything is pushed. 4409 mirrors HTTP 409; retry with backoff,
 * as a standby, since the session is free again once the other connection closes.
 */
export const CLOSE_AGENT_CONNECTED = 4409;
/**
 * The agent's token was rotated or the agent deleted while this connection was open: nothing
 * more is pushed on it. 4401 mirrors HTTP 401; reconnecting with the old token is refused.
 */
export const CLOSE_TOKEN_REVOKED = 4401;
export const TOKEN_REVOKED_REASON = `${ErrorCode.UNAUTHORIZED}: this agent token was rotated or the agent deleted; start the agent with its new token`;
/**
 * The agent sent more messages than it waited for answers to (`MAX_WAITING_MESSAGES` on the
 * server): the connection is closed with 1008 (policy violation) and the messages not yet taken
 * are dropped, unrecorded. Reconnect, and wait for each message's result before sending far more.
 */
export const CLOSE_TOO_MANY_MESSAGES = 1008;
export const TOO_MANY_MESSAGES_REASON = `${ErrorCode.INVALID_REQUEST}: too many messages waiting for answers; wait for results before sending more`;
/**
 * A message larger than the 64 KiB an agent message may hold closes the connection with 1009
 * (message too big) before any of it is read.
 */
export const CLOSE_MESSAGE_TOO_BIG = 1009;
/** At most 123 bytes: the WebSocket close frame's limit. */
export const AGENT_CONNECTED_REASON = `${ErrorCode.AGENT_CONNECTED}: another connection for this agent is open; stop that process. Retry after it closes or misses a ping`;

/** Server → agent, first message of every connection. */
export interface HelloMessage {
  type: 'hello';
  agent: { id: string; name: string; accountId: string };
  /** At most this many signals are pushed and left unacknowledged at once. */
  window: number;
}

/** Server → agent: signals newly handed out on this connection, oldest (lowest seq) first. */
export interface SignalsMessage {
  type: 'signals';
  signals: AgentSignal[];
}

/** Server → agent: the answer to one agent message, matched by its `ref`. */
export interface ResultMessage {
  type: 'result';
  /** The `ref` of the message answered; null when it had none or could not be read. */
  ref: string | number | null;
  /** The HTTP status the same request would get: 200 on success. */
  status: number;
  /** The delivery (ack), `{savedAt}` (state), `{recorded, known}` (fills) or a problem body (status ≥ 400). */
  body: unknown | ProblemBody;
}

export type ServerMessage = HelloMessage | SignalsMessage | ResultMessage;

/** Agent → server: acknowledge a signal, as `POST /api/agent/signals/{id}/ack`. */
export interface AckMessage {
  type: 'ack';
  ref?: string | number;
  id: string;
  status: 'executed' | 'rejected' | 'failed';
  message?: string | null;
  result?: unknown;
  timings?: AckTimings | null;
}

/** Agent → server: publish the account snapshot, as `PUT /api/agent/state`. */
export interface StateMessage {
  type: 'state';
  ref?: string | number;
  state: Record<string, unknown>;
}

/**
 * Agent → server: report the venue's fills, funding payments and busts for the ledger, as
 * `POST /api/agent/fills`. The report is that request's body, whole, in `report` (as `state`
 * carries the snapshot), so it is checked and answered as the HTTP body is (`{recorded, known}`;
 * a problem's `param` names the field inside the report). A server older than this message
 * answers 400 with `param: 'type'`: send the report over HTTP instead.
 */
export interface FillsMessage {
  type: 'fills';
  ref?: string | number;
  report: LedgerReport;
}

export type AgentMessage = AckMessage | StateMessage | FillsMessage;
