import net from 'node:net';
import { performance } from 'node:perf_hooks';
import { readAnswerHead } from './answer-head.js';

/**
 * An answer as the benchmark's clients need it: when its head arrived, its status, its body.
 * `body` is a view of the connection's read buffer, valid only during the callback it is
 * passed to.
 */
export interface RawAnswer {
  /** Epoch ms (to the microsecond) the bytes completing the answer's head arrived. */
  headAt: number;
  status: number;
  body: Buffer;
}

/** Epoch milliseconds to the microsecond, comparable across the processes of one machine. */
export function now(): number {
  return performance.timeOrigin + performance.now();
}

/** Read into one buffer per connection, with no stream in between (node's `onread`). */
const READ_BUFFER_BYTES = 16 * 1024;

/**
 * One kept-alive HTTP/1.1 client connection on a plain `net` socket, one request at a time:
 * writes a request built beforehand, reads back the status line, Content-Length and the body,
 * and nothing else. node's http client spent 0.3–0.4 ms of CPU per request building and parsing
 * what the benchmark never reads, on the cores the server under test runs on. Answers must
 * carry a Content-Length (signalgate's do); one without ends the connection as a failure.
 */
export class RawHttpConnection {
  private readonly socket: net.Socket;
  /** Bytes of an answer not complete yet, copied out of the read buffer. */
  private partial: Buffer | null = null;
  private status = 0;
  private headAt = 0;
  private bodyStart = -1;
  private contentLength = 0;
  private closeAfter = false;
  private waiting: ((answer: RawAnswer | null) => void) | null = null;
  /** False once the connection ended (closed by the server, an error, or a malformed answer). */
  alive = true;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('error', () => this.end());
    socket.on('close', () => this.end());
  }

  /** Opens a connection to `host:port`. */
  static open(host: string, port: number): Promise<RawHttpConnection> {
    return new Promise((resolve, reject) => {
      let connection: RawHttpConnection | null = null;
      const buffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
      const socket = net.connect({
        host,
        port,
        onread: {
          buffer,
          callback: (bytes) => {
            connection?.read(buffer.subarray(0, bytes));
            return true;
          },
        },
      });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        connection = new RawHttpConnection(socket);
        resolve(connection);
      });
    });
  }

  /** Writes `request` (a whole HTTP/1.1 request); `onAnswer` gets its answer, or null if the connection failed first. */
  send(request: Buffer, onAnswer: (answer: RawAnswer | null) => void): void {
    if (!this.alive) return onAnswer(null);
    this.waiting = onAnswer;
    this.socket.write(request);
  }

  close(): void {
    this.alive = false;
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    const data = this.partial === null ? chunk : Buffer.concat([this.partial, chunk]);
    this.partial = null;
    if (this.bodyStart < 0) {
      const headEnd = data.indexOf('\r\n\r\n');
      if (headEnd < 0) return this.keep(data);
      this.headAt = now();
      const head = readAnswerHead(data.toString('latin1', 0, headEnd));
      if (head.contentLength === null) return this.end();
      this.status = head.status;
      this.contentLength = head.contentLength;
      this.closeAfter = head.closeAfter;
      this.bodyStart = headEnd + 4;
    }
    if (data.length - this.bodyStart < this.contentLength) return this.keep(data);
    const body = data.subarray(this.bodyStart, this.bodyStart + this.contentLength);
    this.bodyStart = -1;
    const waiting = this.waiting;
    this.waiting = null;
    if (this.closeAfter) this.close();
    waiting?.({ headAt: this.headAt, status: this.status, body });
  }

  /** The read buffer is reused by the next read: what is kept is copied. */
  private keep(data: Buffer): void {
    this.partial = Buffer.from(data);
  }

  private end(): void {
    if (!this.alive && this.waiting === null) return;
    this.alive = false;
    this.partial = null;
    this.bodyStart = -1;
    const waiting = this.waiting;
    this.waiting = null;
    waiting?.(null);
    this.socket.destroy();
  }
}
