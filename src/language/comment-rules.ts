/**
 * What a comment may hold. It labels trades and filters close actions, so it must survive the
 * round trip to the broker and back unchanged: one line, no control or invisible separator
 * characters, and short (brokers cut long order comments, and a cut label no longer matches
 * its close filter). Surrounding white space is trimmed in both formats, quoted or not.
 */
export const COMMENT_MAX_CHARACTERS = 64;

/** `comment` is already trimmed; answers the detail of what is wrong, if anything. */
export function commentProblem(comment: string): string | undefined {
  if (comment === '') return 'comment is empty; give a label or leave comment out';
  const length = [...comment].length;
  if (length > COMMENT_MAX_CHARACTERS) {
    return `comment is ${length} characters long; a comment has at most ${COMMENT_MAX_CHARACTERS}`;
  }
  if (/[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u.test(comment)) {
    return 'comment holds a control character or line break; a comment is one line of printable text';
  }
  return undefined;
}
