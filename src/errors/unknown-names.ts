import type { Problem } from './catalog.js';

/**
 * The problems for names nobody asked for: a field of a JSON body or a query parameter that is
 * not one of `known` is refused, never ignored (a typo must not pass as "not given").
 */
export function unknownNames(
  given: Iterable<string>,
  known: readonly string[],
  kind: 'field' | 'query parameter',
): Problem[] {
  const problems: Problem[] = [];
  for (const name of given) {
    if (known.includes(name)) continue;
    problems.push({
      code: kind === 'field' ? 'INVALID_FIELD' : 'INVALID_REQUEST',
      param: name,
      detail: `unknown ${kind} '${name}'; ${known.length > 0 ? `the ${kind === 'field' ? 'fields' : 'parameters'} are ${known.join(', ')}` : 'none are taken here'}`,
    });
  }
  return problems;
}
