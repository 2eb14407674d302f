import { ErrorCode, type Problem } from '../errors/catalog.js';

/**
 * A refused request costs its sender nothing but is answered and kept in the signal log, so what
 * a refusal may make the server write is bounded here: a 16 KiB body of unknown parameters would
 * otherwise be answered and stored as some 2,900 problems (about 280 KB).
 */

/** The problems an answer and its log entry list; the rest are counted in one more entry. */
export const MAX_LISTED_PROBLEMS = 10;

/** How much of a refused request's body the signal log keeps. */
export const MAX_REFUSED_BODY_BYTES = 1024;

/** The first `MAX_LISTED_PROBLEMS` problems, then a `MORE_PROBLEMS` entry saying how many are left out. */
export function listedProblems(problems: Problem[]): Problem[] {
  if (problems.length <= MAX_LISTED_PROBLEMS) return problems;
  const more = problems.length - MAX_LISTED_PROBLEMS;
  return [
    ...problems.slice(0, MAX_LISTED_PROBLEMS),
    {
      code: ErrorCode.MORE_PROBLEMS,
      detail: `${more} more problem${more === 1 ? ' is' : 's are'} not listed; fix the ones above and send again to see the rest`,
    },
  ];
}

/**
 * The body as the signal log keeps it for a refusal: whole up to `MAX_REFUSED_BODY_BYTES`, else
 * its first bytes (cut before a UTF-8 sequence that would not fit) followed by a mark saying so.
 * `complete` is false when the body read is itself only the start of what was sent (over 16 KiB).
 */
export function refusedRawBody(body: Buffer, complete: boolean): string {
  // Nothing read (a Content-Length over the limit is refused before the body): nothing to cut.
  if ((body.length <= MAX_REFUSED_BODY_BYTES && complete) || body.length === 0) return lenientUtf8.decode(body);
  let end = Math.min(body.length, MAX_REFUSED_BODY_BYTES);
  // Back off continuation bytes (10xxxxxx) and the lead byte of a sequence cut short.
  if (end < body.length) {
    let start = end;
    while (start > 0 && (body[start]! & 0xc0) === 0x80) start--;
    end = start;
  }
  const total = complete ? `${body.length}` : `more than ${body.length}`;
  return `${lenientUtf8.decode(body.subarray(0, end))}…[cut by signalgate: the first ${end} of ${total} bytes are kept]`;
}

const lenientUtf8 = new TextDecoder('utf-8');
