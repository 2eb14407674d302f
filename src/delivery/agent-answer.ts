import type { Problem } from '../errors/catalog.js';
import { type ProblemBody, problemBody } from '../errors/problem-body.js';

/**
 * What an agent operation answers, whichever transport carried it: HTTP sends `status` and
 * `body` as they are; the WebSocket sends them in a `result` message. Errors carry an
 * RFC 9457 problem body.
 */
export type AgentAnswer =
  { ok: true; status: number; body: unknown } | { ok: false; status: number; body: ProblemBody };

export function success(body: unknown, status = 200): AgentAnswer {
  return { ok: true, status, body };
}

export function failure(...problems: Problem[]): AgentAnswer {
  const body = problemBody(problems);
  return { ok: false, status: body.status, body };
}
