import type { AgentSignal } from '../src/agent/agent-client.js';
import { type BenchAgentEvents, EXECUTED, SignalQueue } from './bench-agent.js';
import { type RawAnswer, RawHttpConnection, now } from './raw-http-connection.js';

/** The poll's wait once connected, as `AgentClient`'s default. */
const POLL_WAIT_SECONDS = 25;
/** After a poll that brought only repeats (their acks still on the way), a failed poll, or a lost connection. */
const PAUSE_MS = 250;
/** Connections kept alive at most, as `AgentHttp`'s pool (`maxSockets`); requests beyond wait for one. */
const MAX_CONNECTIONS = 4;

interface Request {
  bytes: Buffer;
  onAnswer: (answer: RawAnswer | null) => void;
}

/**
 * A benchmark agent by long-poll: `GET /api/agent/signals?wait=25`, then the signals taken in
 * order, each acknowledged by `POST /api/agent/signals/{id}/ack` without waiting for the acks
 * before it, and the next poll only once every signal taken was acknowledged (or the poll would
 * hand them out again): as the agent (`ExecutingAgent` on `AgentClient`) does. The same requests and
 * headers the client library sends, on up to four kept-alive connections as its pool keeps
 * (`RawHttpConnection`) rather than through node's http client, whose CPU per request was most of
 * the agents process's. An ack whose connection failed is counted failed, not retried.
 */
export class BenchPollAgent {
  private readonly signals = new SignalQueue();
  private readonly pollRequest: Buffer;
  private readonly connections = new Set<RawHttpConnection>();
  private readonly idle: RawHttpConnection[] = [];
  private readonly waiting: Request[] = [];
  /** Connections open or being opened. */
  private opened = 0;
  /** Acks sent and not answered yet. */
  private acking = 0;
  private closed = false;

  constructor(
    private readonly server: URL,
    private readonly token: string,
    private readonly events: BenchAgentEvents,
  ) {
    this.pollRequest = this.request('GET', `/api/agent/signals?wait=${POLL_WAIT_SECONDS}`);
    // The first poll does not wait, so the agent is known (and ready) at once.
    this.poll(this.request('GET', '/api/agent/signals?wait=0'), true);
  }

  close(): void {
    this.closed = true;
    for (const connection of this.connections) connection.close();
  }

  private poll(request = this.pollRequest, first = false): void {
    const askedAt = now();
    this.send(request, (answer) => {
      if (answer === null) return this.poll(request, first);
      if (answer.status !== 200) return void setTimeout(() => this.poll(request, first), PAUSE_MS);
      if (first) this.events.ready();
      const ids = signalIds(answer);
      if (this.signals.offer(ids, { askedAt, receivedAt: answer.headAt }) > 0) this.takeAll();
      else if (ids.length > 0) setTimeout(() => this.poll(), PAUSE_MS);
      else this.poll();
    });
  }

  /** Each signal in turn held and its ack sent; the next poll once the last ack is answered. */
  private takeAll(): void {
    for (const { id, carrier } of this.signals.takeAll()) {
      this.events.held(id, carrier);
      this.acking++;
      this.send(
        this.request('POST', `/api/agent/signals/${encodeURIComponent(id)}/ack`, JSON.stringify(EXECUTED)),
        (answer) => {
          this.events.acked(answer?.status === 200);
          if (--this.acking === 0) this.poll();
        },
      );
    }
  }

  /** On an idle connection, else on a new one while fewer than four are open, else when one is free. */
  private send(bytes: Buffer, onAnswer: (answer: RawAnswer | null) => void): void {
    if (this.closed) return;
    let connection = this.idle.pop();
    // One the server closed while idle is dropped, as node's pool drops it.
    while (connection !== undefined && !connection.alive) {
      this.lost(connection);
      connection = this.idle.pop();
    }
    if (connection !== undefined) return this.write(connection, { bytes, onAnswer });
    this.waiting.push({ bytes, onAnswer });
    if (this.opened < MAX_CONNECTIONS) this.open();
  }

  private write(connection: RawHttpConnection, request: Request): void {
    connection.send(request.bytes, (answer) => {
      if (answer !== null && connection.alive) this.free(connection);
      else this.lost(connection);
      request.onAnswer(answer);
    });
  }

  /** A connection ready for the next request: the oldest waiting one, if any. */
  private free(connection: RawHttpConnection): void {
    if (this.closed) return;
    const request = this.waiting.shift();
    if (request === undefined) this.idle.push(connection);
    else this.write(connection, request);
  }

  private lost(connection: RawHttpConnection): void {
    if (!this.connections.delete(connection)) return;
    this.opened--;
    const at = this.idle.indexOf(connection);
    if (at >= 0) this.idle.splice(at, 1);
  }

  /** A new connection for the waiting requests; tried again after a pause until it opens. */
  private open(): void {
    this.opened++;
    RawHttpConnection.open(this.server.hostname, Number(this.server.port)).then(
      (connection) => {
        if (this.closed) return connection.close();
        this.connections.add(connection);
        this.free(connection);
      },
      () => {
        this.opened--;
        setTimeout(() => {
          if (!this.closed && this.waiting.length > 0 && this.opened < MAX_CONNECTIONS) this.open();
        }, PAUSE_MS);
      },
    );
  }

  /** What `AgentClient`'s http calls write: request line, then its headers in its order. */
  private request(method: 'GET' | 'POST', path: string, json?: string): Buffer {
    const body = json === undefined ? null : Buffer.from(json);
    const head =
      `${method} ${path} HTTP/1.1\r\nauthorization: Bearer ${this.token}\r\n` +
      (body === null ? '' : `content-type: application/json\r\ncontent-length: ${body.length}\r\n`) +
      `Host: ${this.server.host}\r\nConnection: keep-alive\r\n\r\n`;
    return body === null ? Buffer.from(head, 'latin1') : Buffer.concat([Buffer.from(head, 'latin1'), body]);
  }
}

function signalIds(answer: RawAnswer): string[] {
  return (JSON.parse(answer.body.toString('utf8')) as { signals: AgentSignal[] }).signals.map((signal) => signal.id);
}
