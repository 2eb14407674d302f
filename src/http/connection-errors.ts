import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ErrorCode, type Problem } from '../errors/catalog.js';
import { rawProblemAnswer } from '../http-kit/raw-problem-answer.js';

/**
 * Answers bytes on a connection that are not HTTP (node's `clientError`). Node and Fastify
 * answer those at once, ahead of any answer still owed on that connection: a sender whose
 * Content-Length was one byte short had its signal stored, yet read a 400 and never the 202.
 * Here the error answer waits until every request read before it on that connection has been
 * answered, so answers keep the order of the requests, and is a problem body like every other.
 */
export class ConnectionErrors {
  private readonly unanswered = new WeakMap<Socket, Set<IncomingMessage>>();
  private readonly waiting = new WeakMap<Socket, string>();

  constructor(private readonly logger: Logger) {}

  /** Holds a request as owed an answer on its connection until its response closes. */
  track(req: IncomingMessage, res: ServerResponse): void {
    const socket = req.socket;
    let owed = this.unanswered.get(socket);
    if (owed === undefined) this.unanswered.set(socket, (owed = new Set()));
    owed.add(req);
    res.once('close', () => this.answered(socket, req));
  }

  /** The `clientError` listener. */
  readonly onClientError = (error: Error & { code?: string }, socket: Socket): void => {
    if (error.code === 'ECONNRESET' || socket.destroyed || this.waiting.has(socket)) return;
    const answer = errorAnswer(error);
    this.logger.info(
      { code: error.code ?? null, statusCode: answer.status },
      'bytes on a connection that are not an HTTP request; answered and closed',
    );
    this.waiting.set(socket, answer.text);
    const owed = [...(this.unanswered.get(socket) ?? [])];
    // Requests read in full get their answers first. One whose own bytes broke off (a bad
    // chunk, a timeout) can never be answered, so then the error answer goes at once.
    if (owed.length > 0 && owed.every((req) => req.complete)) {
      socket.pause();
      return;
    }
    closeWith(socket, answer.text);
  };

  private answered(socket: Socket, req: IncomingMessage): void {
    const owed = this.unanswered.get(socket);
    owed?.delete(req);
    const text = this.waiting.get(socket);
    if ((owed === undefined || owed.size === 0) && text !== undefined && !socket.destroyed) closeWith(socket, text);
  }
}

function closeWith(socket: Socket, text: string): void {
  if (socket.writable) socket.write(text);
  socket.destroySoon();
}

function errorAnswer(error: Error & { code?: string }): { status: number; text: string } {
  const [status, problem] = describe(error.code);
  return { status, text: rawProblemAnswer(problem, status) };
}

function describe(code: string | undefined): [number, Problem] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return [
      408,
      {
        code: ErrorCode.INVALID_REQUEST,
        detail: 'the request was not received in full within 30 seconds; send it again',
      },
    ];
  }
  if (code === 'HPE_HEADER_OVERFLOW') {
    return [
      431,
      {
        code: ErrorCode.INVALID_REQUEST,
        detail: 'the request headers are larger than the server reads (16 KiB); send fewer or shorter headers',
      },
    ];
  }
  return [
    400,
    {
      code: ErrorCode.INVALID_REQUEST,
      detail:
        'these bytes are not an HTTP/1.1 request, so the connection is closed; if they followed a request, check that its Content-Length counts the body in bytes, not characters',
    },
  ];
}
