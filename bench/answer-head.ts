/** What the benchmark's own HTTP clients read of an answer's head, and nothing more. */
export interface AnswerHead {
  status: number;
  /** null when the answer has none (signalgate's always do). */
  contentLength: number | null;
  /** The server closes the connection after this answer. */
  closeAfter: boolean;
}

/** Reads `head`, an answer's text up to (not including) the blank line that ends it. */
export function readAnswerHead(head: string): AnswerHead {
  const length = /\r\ncontent-length:[ \t]*(\d+)/i.exec(head);
  return {
    status: Number(head.slice(9, 12)),
    contentLength: length === null ? null : Number(length[1]),
    closeAfter: /\r\nconnection:[ \t]*close/i.test(head),
  };
}
