import type { FastifyReply } from 'fastify';
import { type Problem, statusOf } from '../errors/catalog.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../errors/problem-body.js';

/** Answers with an RFC 9457 problem body; the first problem decides the status. */
export function sendProblem(reply: FastifyReply, problems: readonly Problem[], status?: number): FastifyReply {
  const body = problemBody(problems, status);
  return reply
    .code(body.status ?? statusOf(body.code))
    .header('content-type', PROBLEM_CONTENT_TYPE)
    .send(body);
}
