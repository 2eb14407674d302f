/** Shorthands for the language tests: the signal of a valid body, the problems of an invalid one. */
import type { Problem } from '../../src/errors/catalog.js';
import { type NormalizedSignal, parseSignal, type SignalFormat } from '../../src/language/index.js';

export function signalOf(body: string, format: SignalFormat = 'text'): NormalizedSignal {
  const outcome = parseSignal(body, format);
  if (!outcome.ok)
    throw new Error(`expected ${JSON.stringify(body)} to parse, got ${JSON.stringify(outcome.problems, null, 2)}`);
  return outcome.signal;
}

export function problemsOf(body: string, format: SignalFormat = 'text'): Problem[] {
  const outcome = parseSignal(body, format);
  if (outcome.ok)
    throw new Error(`expected ${JSON.stringify(body)} to be refused, got ${JSON.stringify(outcome.signal)}`);
  return outcome.problems;
}

/** The one problem of a body that has exactly one. */
export function problemOf(body: string, format: SignalFormat = 'text'): Problem {
  const problems = problemsOf(body, format);
  if (problems.length !== 1)
    throw new Error(`expected one problem for ${JSON.stringify(body)}, got ${JSON.stringify(problems, null, 2)}`);
  return problems[0]!;
}

/** `[code, param]` of every problem, in the order reported. */
export function codesOf(body: string, format: SignalFormat = 'text'): [string, string | undefined][] {
  return problemsOf(body, format).map((problem) => [problem.code, problem.param]);
}
