/**
 * From this many characters a page is answered as its UTF-8 bytes rather than as one string.
 * V8 allocates a string of over 128 KiB (64 Ki characters less a header, if one is two-byte) on
 * its own pages, about 1 ms each here, and a page as a string made three: the join, its flat copy
 * for the content-length, and that copy with the headers for the socket. Under the limit both
 * ways cost the same, so short pages stay strings (docs/decisions/0010-admin-page-encoding.md).
 */
export const ONE_BUFFER_FROM_CHARACTERS = 60 * 1024;

const COMMA = 0x2c;

/**
 * `head + items.join(',') + tail`, the answer of a page of JSON items written beforehand: that
 * string when short, otherwise its UTF-8 bytes in one Buffer, each item encoded into it where
 * it goes. Both are the same bytes on the wire.
 */
export function jsonPageBody(head: string, items: readonly string[], tail: string): string | Buffer {
  let characters = head.length + tail.length + items.length;
  for (const item of items) characters += item.length;
  if (characters < ONE_BUFFER_FROM_CHARACTERS) return `${head}${items.join(',')}${tail}`;

  let size = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, items.length - 1);
  for (const item of items) size += Buffer.byteLength(item);
  // Uninitialised: every byte of it is written below, which the check at the end confirms.
  const bytes = Buffer.allocUnsafe(size);
  let at = bytes.write(head, 0);
  for (let k = 0; k < items.length; k++) {
    if (k > 0) bytes[at++] = COMMA;
    at += bytes.write(items[k]!, at);
  }
  at += bytes.write(tail, at);
  if (at !== size) throw new Error(`a page's body came to ${at} of its ${size} bytes`);
  return bytes;
}
