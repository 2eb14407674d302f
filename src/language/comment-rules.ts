/**
 * What a comment may hold. It labels trades and filters close actions, so it must survive the
 * round trip to the broker and back unchanged: one line, no control or invisible separator
 * characters, and short (brokers cut long order comments, and a cut label no longer matches
 * its close filter). Surrounding white space is trimmed in both formats, quoted or not.
 */
export const COMMENT_MAX_CHARACTERS = 64;

const CONTROL_OR_LINE_BREAK = /[\p{Cc}\p{Cs}\p{Zl}\p{Zp}]/u;

/** `comment` is already trimmed; answers the detail of what is wrong, if anything. */
export function commentProblem(comment: string): string | undefined {
  if (comment === '') return 'comment is empty; give a label or leave comment out';
  // Characters are code points; only a string of more code units than the limit can have too many.
  if (comment.length > COMMENT_MAX_CHARACTERS) {
    const length = [...comment].length;
    if (length > COMMENT_MAX_CHARACTERS)
      return `comment is ${length} characters long; a comment has at most ${COMMENT_MAX_CHARACTERS}`;
  }
  if (CONTROL_OR_LINE_BREAK.test(comment)) {
    return 'comment holds a control character or line break; a comment is one line of printable text';
  }
  return undefined;
}
