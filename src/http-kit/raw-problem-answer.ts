import { STATUS_CODES } from 'node:http';
import { type Problem, statusOf } from '../errors/catalog.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../errors/problem-body.js';

/**
 * A whole HTTP/1.1 problem answer, as bytes to write on a socket that node:http does not answer
 * (an upgrade refused, bytes that are not HTTP), with `headers` beside its own. It closes the
 * connection.
 */
export function rawProblemAnswer(
  problem: Problem,
  status = statusOf(problem.code),
  headers: Record<string, string> = {},
): string {
  const body = JSON.stringify(problemBody([problem], status));
  const extra = Object.entries(headers)
    .map(([name, value]) => `${name}: ${value}\r\n`)
    .join('');
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\nContent-Type: ${PROBLEM_CONTENT_TYPE}\r\n${extra}` +
    `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`
  );
}
