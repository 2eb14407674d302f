import net from 'node:net';
import { readAnswerHead } from './answer-head.js';

/** Every read lands in this one buffer per connection (node's `onread`): no Buffer per chunk. */
const READ_BUFFER_BYTES = 64 * 1024;
/** A head longer than this is not one of signalgate's answers. */
const MAX_HEAD_BYTES = 16 * 1024;
const HEAD_END = Buffer.from('\r\n\r\n');

/**
 * One kept-alive HTTP/1.1 connection that GETs a page and counts its body's bytes as they
 * arrive, keeping none of them (but a refusal's, for its message). node's http client hands
 * every chunk over as a Buffer of its own: for a page of 650 KB that is external memory, and
 * V8 answered its pressure with a mark-compact in the benchmark's process every few pages,
 * 1-9 ms each, which the page's time then counted as the server's. Answers must carry a
 * Content-Length (signalgate's do).
 */
export class CountingHttpConnection {
  private head: Buffer[] = [];
  private headBytes = 0;
  /** -1 while the head is still being read. */
  private remaining = -1;
  private status = 0;
  private bodyBytes = 0;
  private closeAfter = false;
  private refusal: Buffer[] | null = null;
  private waiting: { resolve: (bytes: number) => void; reject: (error: Error) => void; url: string } | null = null;
  /** False once the connection ended (closed, an error, or an answer it could not read). */
  alive = true;

  private constructor(
    private readonly socket: net.Socket,
    private readonly host: string,
  ) {
    socket.setNoDelay(true);
    socket.on('error', (error) => this.fail(error));
    socket.on('close', () => this.fail(new Error('the connection closed before the answer was complete')));
  }

  static open(origin: string): Promise<CountingHttpConnection> {
    const url = new URL(origin);
    if (url.protocol !== 'http:') throw new Error(`a counting connection speaks plain HTTP only, not ${url.protocol}`);
    return new Promise((resolve, reject) => {
      let connection: CountingHttpConnection | null = null;
      const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
      const socket = net.connect({
        host: url.hostname,
        port: Number(url.port),
        onread: {
          buffer,
          callback: (bytes) => {
            connection?.read(buffer, bytes);
            return true;
          },
        },
      });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        connection = new CountingHttpConnection(socket, url.host);
        resolve(connection);
      });
    });
  }

  /** GETs `path` with the bearer `token`; answers the body's byte count of a 200, rejects anything else. */
  get(path: string, token: string): Promise<number> {
    if (!this.alive) return Promise.reject(new Error('the connection is closed'));
    if (this.waiting !== null) return Promise.reject(new Error('one request at a time'));
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject, url: path };
      this.socket.write(`GET ${path} HTTP/1.1\r\nhost: ${this.host}\r\nauthorization: Bearer ${token}\r\n\r\n`);
    });
  }

  close(): void {
    this.alive = false;
    this.socket.destroy();
  }

  private read(buffer: Buffer, bytes: number): void {
    let at = 0;
    if (this.remaining < 0) {
      // The head, kept until its end is seen (it may span reads).
      this.head.push(Buffer.from(buffer.subarray(0, bytes)));
      this.headBytes += bytes;
      const seen = Buffer.concat(this.head, this.headBytes);
      const end = seen.indexOf(HEAD_END);
      if (end < 0) {
        if (this.headBytes > MAX_HEAD_BYTES) this.fail(new Error('an answer head of over 16 KiB'));
        return;
      }
      const head = readAnswerHead(seen.toString('latin1', 0, end));
      if (head.contentLength === null) return this.fail(new Error('an answer without a Content-Length'));
      this.status = head.status;
      this.closeAfter = head.closeAfter;
      this.remaining = head.contentLength;
      this.bodyBytes = 0;
      this.refusal = this.status === 200 ? null : [];
      this.head = [];
      this.headBytes = 0;
      // What of this read follows the head: its position within this read's bytes.
      at = bytes - (seen.length - (end + HEAD_END.length));
    }
    if (bytes - at > this.remaining) return this.fail(new Error('bytes after the answer, with one request at a time'));
    const body = bytes - at;
    this.bodyBytes += body;
    this.remaining -= body;
    this.refusal?.push(Buffer.from(buffer.subarray(at, at + body)));
    if (this.remaining > 0) return;
    this.remaining = -1;
    const waiting = this.waiting;
    this.waiting = null;
    if (this.closeAfter) this.close();
    if (waiting === null) return;
    if (this.refusal === null) waiting.resolve(this.bodyBytes);
    else waiting.reject(new Error(`${waiting.url}: ${this.status} ${Buffer.concat(this.refusal).toString('utf8')}`));
  }

  private fail(error: Error): void {
    this.alive = false;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.reject(error);
    this.socket.destroy();
  }
}
