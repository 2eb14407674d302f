import type { IncomingMessage } from 'node:http';

export interface BoundedBody {
  /** What was read: all of it, or the first `limit` bytes when it was too large. */
  body: Buffer;
  tooLarge: boolean;
}

/**
 * Reads a request body, stopping once it exceeds `limit` bytes: an oversized body is refused
 * without buffering it (the answer then closes the connection).
 */
export function readBoundedBody(req: IncomingMessage, limit: number): Promise<BoundedBody> {
  const declared = Number(req.headers['content-length']);
  if (Number.isFinite(declared) && declared > limit) {
    return Promise.resolve({ body: Buffer.alloc(0), tooLarge: true });
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      chunks.push(chunk);
      if (size > limit) {
        cleanup();
        req.pause();
        // The log keeps the first `limit` bytes, however the chunks fell.
        resolve({ body: Buffer.concat(chunks).subarray(0, limit), tooLarge: true });
      }
    };
    const onEnd = () => {
      cleanup();
      resolve({ body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size), tooLarge: false });
    };
    const onError = (err: Error) => {
      cleanup();
      reject(err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}
