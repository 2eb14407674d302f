import type { AgentSignal } from '../agent/agent-client.js';
import { type BenchAgentEvents, EXECUTED, SignalQueue } from './bench-agent.js';
import { type RawAnswer, RawHttpConnection, now } from './raw-http-connection.js';

/** The poll's wait once connected, as `AgentClient`'s default. */
const POLL_WAIT_SECONDS = 25;
/** After a poll that brought only repeats (their acks still on the way), a failed poll, or a lost connection. */
const PAUSE_MS = 250;

/**
 * A benchmark agent by long-poll: `GET /api/agent/signals?wait=25`, then each signal taken and
 * acknowledged by `POST /api/agent/signals/{id}/ack` one at a time, and the next poll only once
 * every signal taken was acknowledged, as `AgentClient` does (or the poll would hand them out
 * again). The same requests and headers the client library sends, written on one kept-alive
 * connection (`RawHttpConnection`) rather than through node's http client, whose CPU per request
 * was most of the agents process's. An ack whose connection failed is counted failed, not retried.
 */
export class BenchPollAgent {
  private readonly signals = new SignalQueue();
  private readonly pollRequest: Buffer;
  private connection: RawHttpConnection | null = null;
  private closed = false;

  constructor(
    private readonly server: URL,
    private readonly token: string,
    private readonly events: BenchAgentEvents,
  ) {
    this.pollRequest = this.request('GET', `/api/agent/signals?wait=${POLL_WAIT_SECONDS}`);
    // The first poll does not wait, so the agent is known (and ready) at once.
    this.connect(() => this.poll(this.request('GET', '/api/agent/signals?wait=0'), true));
  }

  close(): void {
    this.closed = true;
    this.connection?.close();
  }

  private poll(request = this.pollRequest, first = false): void {
    const askedAt = now();
    this.send(request, (answer) => {
      if (answer === null) return this.connect(() => this.poll());
      if (answer.status !== 200) return void setTimeout(() => this.poll(), PAUSE_MS);
      if (first) this.events.ready();
      const ids = signalIds(answer);
      if (this.signals.offer(ids, { askedAt, receivedAt: answer.headAt }) > 0) this.takeNext();
      else if (ids.length > 0) setTimeout(() => this.poll(), PAUSE_MS);
      else this.poll();
    });
  }

  private takeNext(): void {
    const next = this.signals.take();
    if (next === undefined) return this.poll();
    const { id, carrier } = next;
    this.events.held(id, carrier);
    this.send(this.request('POST', `/api/agent/signals/${encodeURIComponent(id)}/ack`, JSON.stringify(EXECUTED)), (answer) => {
      this.events.acked(answer?.status === 200);
      if (answer === null) this.connect(() => this.takeNext());
      else this.takeNext();
    });
  }

  private send(request: Buffer, onAnswer: (answer: RawAnswer | null) => void): void {
    if (this.closed) return;
    this.connection!.send(request, onAnswer);
  }

  /** A new connection (the first, or after the server closed one), then `then`; tried again after a pause until it opens. */
  private connect(then: () => void): void {
    if (this.closed) return;
    RawHttpConnection.open(this.server.hostname, Number(this.server.port)).then(
      (connection) => {
        this.connection = connection;
        then();
      },
      () => setTimeout(() => this.connect(then), PAUSE_MS),
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
