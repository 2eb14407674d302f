import { type ErrorCode, type Problem, statusOf, titleOf } from './catalog.js';

/** An RFC 9457 problem body, as every error answer of signalgate carries it. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  param?: string;
  errors?: Problem[];
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * The body for one or several problems: the first one speaks for the answer, and `errors`
 * lists all of them when there are several.
 */
export function problemBody(problems: readonly Problem[], status?: number): ProblemBody {
  const first = problems[0];
  if (first === undefined) throw new Error('problemBody needs at least one problem');
  const body: ProblemBody = {
    type: `urn:signalgate:problem:${first.code}`,
    title: titleOf(first.code),
    status: status ?? statusOf(first.code),
    code: first.code,
    detail: first.detail,
  };
  if (first.param !== undefined) body.param = first.param;
  if (problems.length > 1) body.errors = problems.map((p) => ({ ...p }));
  return body;
}
