import type { Logger } from 'pino';
import type { DeliveryAlerts } from './delivery-alerts.js';
import { ErrorCode, type Problem } from '../errors/catalog.js';
import { unknownNames } from '../errors/unknown-names.js';
import { ACK_TIMING_NAMES, type AckStatus, type AckTimings } from '../protocol/delivery.js';
import type { Ack, Store } from '../store/store.js';
import { type AgentAnswer, failure, success } from './agent-answer.js';
import { objectSchema } from '../openapi/index.js';

export const ACK_STATUSES: readonly AckStatus[] = ['executed', 'rejected', 'failed'];

const MAX_MESSAGE_CHARS = 2000;

/** The body of `POST /api/agent/signals/{id}/ack` (and the WebSocket `ack` message's fields). */
export const ACK_BODY = objectSchema(
  {
    status: { type: 'string', enum: ACK_STATUSES, description: 'what the agent did with the signal' },
    message: {
      type: ['string', 'null'],
      maxLength: MAX_MESSAGE_CHARS,
      description: "a note for the signal log, e.g. the broker's refusal",
      examples: ['filled at 1.08412'],
    },
    result: {
      description: 'anything the agent wants recorded with the acknowledgement (order ids, fills)',
      examples: [{ ticket: 123 }],
    },
    timings: {
      type: ['object', 'null'],
      description:
        "when the agent carried the signal out, on its clock: decided, first order sent, the venue's answer, filled; null where it did not happen",
      properties: Object.fromEntries(
        ACK_TIMING_NAMES.map((name) => [name, { type: ['string', 'null'], format: 'date-time' }]),
      ),
      additionalProperties: false,
      examples: [
        {
          decidedAt: '2026-12-02T09:30:00.004Z',
          sentAt: '2026-12-02T09:30:00.005Z',
          venueAckedAt: '2026-12-02T09:30:00.031Z',
          filledAt: '2026-12-02T09:30:00.031Z',
        },
      ],
    },
  },
  ['status'],
);
const ACK_FIELDS = Object.keys(ACK_BODY.properties);

/**
 * An agent's acknowledgement of one of its signals. Repeating the same
 * acknowledgement answers 200 again (an agent whose answer got lost retries safely); a
 * different one for a settled signal is refused, because the log must not rewrite what an
 * account did. One that comes after the signal expired is taken (the agent may have acted on
 * it), and said: the delivery shows `ackedAfterExpiry`, and the server log gets a warning.
 */
export async function acknowledgeSignal(
  store: Store,
  logger: Logger,
  agentId: string,
  signalId: string,
  body: unknown,
  nowMillis: number,
  alerts?: DeliveryAlerts | null,
): Promise<AgentAnswer> {
  const parsed = readAck(body);
  if (!parsed.ok) return failure(...parsed.problems);
  const outcome = await store.deliveries.ack(agentId, signalId, parsed.ack, new Date(nowMillis).toISOString());
  switch (outcome.kind) {
    case 'acked':
      alerts?.acknowledged(outcome.delivery);
      if (outcome.delivery.ackedAfterExpiry) {
        const { status, expiresAt, ackedAt } = outcome.delivery;
        logger.warn(
          { signalId, agentId, status, expiresAt, ackedAt },
          'signal acknowledged after it expired: the agent may have acted on a late signal',
        );
      }
      return success(outcome.delivery);
    case 'already_acked':
      return success(outcome.delivery);
    case 'conflict':
      return failure({
        code: ErrorCode.ALREADY_ACKNOWLEDGED,
        param: 'status',
        detail: `signal ${signalId} was already acknowledged as '${outcome.delivery.status}'${
          outcome.delivery.ackedAt ? ` at ${outcome.delivery.ackedAt}` : ''
        }; an acknowledgement cannot be changed`,
      });
    case 'expired':
      return failure({
        code: ErrorCode.SIGNAL_EXPIRED,
        detail: `signal ${signalId} expired at ${outcome.delivery.expiresAt} before it was delivered; it must not be executed`,
      });
    case 'not_delivered':
      return failure({
        code: ErrorCode.SIGNAL_NOT_DELIVERED,
        param: 'id',
        detail: `signal ${signalId} has not been handed to this agent yet, so it cannot have been executed; take it from GET /api/agent/signals (or the WebSocket) and acknowledge it after acting on it`,
      });
    case 'not_found':
      return failure({
        code: ErrorCode.NOT_FOUND,
        param: 'id',
        detail: `no signal '${signalId}' was queued for this agent`,
      });
  }
}

type ReadAck = { ok: true; ack: Ack } | { ok: false; problems: Problem[] };

/** `{status, message?, result?}`; unknown fields are refused so a typo cannot pass unnoticed. */
export function readAck(body: unknown): ReadAck {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) {
    return {
      ok: false,
      problems: [
        {
          code: ErrorCode.INVALID_REQUEST,
          detail: 'send a JSON object {"status": "executed"|"rejected"|"failed", "message"?, "result"?}',
        },
      ],
    };
  }
  const fields = body as Record<string, unknown>;
  const problems: Problem[] = [];
  const status = fields.status;
  if (typeof status !== 'string' || !(ACK_STATUSES as readonly string[]).includes(status)) {
    problems.push({
      code: ErrorCode.INVALID_FIELD,
      param: 'status',
      detail: `'status' must be one of ${ACK_STATUSES.join(', ')}`,
    });
  }
  const message = fields.message;
  if (
    message !== undefined &&
    message !== null &&
    (typeof message !== 'string' || message.length > MAX_MESSAGE_CHARS)
  ) {
    problems.push({
      code: ErrorCode.INVALID_FIELD,
      param: 'message',
      detail: `'message' must be a string of at most ${MAX_MESSAGE_CHARS} characters`,
    });
  }
  const timings = readTimings(fields.timings, problems);
  problems.push(...unknownNames(Object.keys(fields), ACK_FIELDS, 'field'));
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    ack: {
      status: status as AckStatus,
      message: typeof message === 'string' ? message : null,
      result: fields.result === undefined ? null : fields.result,
      timings,
    },
  };
}

/** `{decidedAt?, sentAt?, venueAckedAt?, filledAt?}`, each an ISO 8601 time or null; absent: null (an agent that sends none). */
function readTimings(value: unknown, problems: Problem[]): AckTimings | null {
  if (value === undefined || value === null) return null;
  const refused = (detail: string): null => {
    problems.push({ code: ErrorCode.INVALID_FIELD, param: 'timings', detail });
    return null;
  };
  if (typeof value !== 'object' || Array.isArray(value))
    return refused(`'timings' must be an object {${ACK_TIMING_NAMES.join(', ')}} of ISO 8601 times, or null`);
  const given = value as Record<string, unknown>;
  const unknown = Object.keys(given).filter((name) => !(ACK_TIMING_NAMES as readonly string[]).includes(name));
  if (unknown.length > 0)
    return refused(`'timings' has unknown field(s) ${unknown.join(', ')}; it takes ${ACK_TIMING_NAMES.join(', ')}`);
  const timings: AckTimings = { decidedAt: null, sentAt: null, venueAckedAt: null, filledAt: null };
  for (const name of ACK_TIMING_NAMES) {
    const time = given[name];
    if (time === undefined || time === null) continue;
    if (typeof time !== 'string' || !ISO_TIME.test(time) || Number.isNaN(Date.parse(time)))
      return refused(`'timings.${name}' must be an ISO 8601 UTC time such as 2026-12-02T09:30:00.005Z, or null`);
    timings[name] = new Date(time).toISOString();
  }
  return timings;
}

const ISO_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/;
