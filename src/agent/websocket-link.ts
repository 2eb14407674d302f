import WebSocket from 'ws';
import {
  CLOSE_AGENT_CONNECTED,
  PUSH_PATH,
  type AgentMessage,
  type HelloMessage,
  type ResultMessage,
  type ServerMessage,
} from '../protocol/push-protocol.js';
import type { AgentSignal } from '../protocol/agent-signal.js';
import { AgentUnauthorizedError, TransientError } from './agent-errors.js';
import type { AgentReply } from './agent-reply.js';
import { CoalescedWrites } from '../protocol/coalesced-writes.js';

/** The server pings every 15 s; silence for this long means the connection is dead. */
/** Where the link connects, for other clients of the same protocol (the benchmark's agents). */
export { PUSH_PATH };

const SILENCE_LIMIT_MS = 40_000;
const CONNECT_TIMEOUT_MS = 10_000;
const REQUEST_TIMEOUT_MS = 15_000;

export interface LinkHandlers {
  onHello(hello: HelloMessage): void;
  onSignals(signals: AgentSignal[]): void;
}

/** Why a link ended; `opened` tells a dropped connection from one that never came up. */
export interface LinkEnd {
  opened: boolean;
  unauthorized: boolean;
  /** The HTTP status the upgrade was refused with, if it was. */
  status: number | null;
  /**
   * The server refused this connection because another one for the agent is open (close code
   * 4409): another process shares the token. Nothing was pushed on it.
   */
  agentConnected: boolean;
  reason: string;
}

/**
 * One WebSocket connection to `/api/agent/ws`: receives pushed signals and sends acks, state
 * updates and ledger reports as requests matched to their `result` by `ref`.
 */
export class WebSocketLink {
  private readonly ws: WebSocket;
  private readonly pending = new Map<number, { resolve: (reply: AgentReply) => void; reject: (err: Error) => void }>();
  private nextRef = 1;
  private opened = false;
  private silence: NodeJS.Timeout | null = null;
  /** The upgraded connection's socket, the messages of one turn written together; null before the upgrade. */
  private writes: CoalescedWrites | null = null;
  /** Resolves when the connection is over, for whatever reason. */
  readonly ended: Promise<LinkEnd>;

  constructor(server: string, token: string, handlers: LinkHandlers) {
    const url = server.replace(/\/+$/, '').replace(/^http/i, 'ws') + PUSH_PATH;
    this.ws = new WebSocket(url, {
      headers: { authorization: `Bearer ${token}` },
      handshakeTimeout: CONNECT_TIMEOUT_MS,
    });
    let unauthorized = false;
    let reason = 'closed';
    let status: number | null = null;
    this.ended = new Promise<LinkEnd>((resolve) => {
      this.ws.on('unexpected-response', (_req, res) => {
        status = res.statusCode ?? 0;
        unauthorized = status === 401;
        reason = `the server refused the WebSocket upgrade with ${res.statusCode}`;
        res.resume();
        this.ws.terminate();
      });
      this.ws.on('error', (err) => {
        if (status !== null) return;
        reason = err.message;
      });
      this.ws.on('close', (code, why) => {
        if (this.silence) clearTimeout(this.silence);
        if (this.opened) reason = `closed with ${code}${why.length > 0 ? ` (${why.toString()})` : ''}`;
        for (const waiting of this.pending.values()) waiting.reject(new TransientError(`WebSocket ${reason}`));
        this.pending.clear();
        resolve({ opened: this.opened, unauthorized, status, agentConnected: code === CLOSE_AGENT_CONNECTED, reason });
      });
    });
    this.ws.on('upgrade', (response) => (this.writes = new CoalescedWrites(response.socket)));
    this.ws.on('open', () => {
      this.opened = true;
      this.heard();
    });
    this.ws.on('ping', () => this.heard());
    this.ws.on('message', (data) => {
      this.heard();
      let message: ServerMessage;
      try {
        message = JSON.parse(data.toString()) as ServerMessage;
      } catch {
        return;
      }
      if (message.type === 'hello') handlers.onHello(message);
      else if (message.type === 'signals') handlers.onSignals(message.signals);
      else if (message.type === 'result') this.settle(message);
    });
  }

  get open(): boolean {
    return this.ws.readyState === WebSocket.OPEN;
  }

  /** Sends an ack, state or fills message and resolves with the server's answer to it. */
  request(message: AgentMessage): Promise<AgentReply> {
    if (!this.open) return Promise.reject(new TransientError('the WebSocket is not open'));
    const ref = this.nextRef++;
    return new Promise<AgentReply>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(ref);
        reject(new TransientError('no answer over the WebSocket in time'));
      }, REQUEST_TIMEOUT_MS);
      this.pending.set(ref, {
        resolve: (reply) => {
          clearTimeout(timer);
          if (reply.status === 401) reject(new AgentUnauthorizedError());
          else if (reply.status >= 500) reject(new TransientError(`the server answered ${reply.status}`));
          else resolve(reply);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      });
      this.writes?.hold();
      this.ws.send(JSON.stringify({ ...message, ref }), (err) => {
        if (err) this.pending.get(ref)?.reject(new TransientError(`could not send: ${err.message}`));
      });
    });
  }

  close(): void {
    if (this.ws.readyState === WebSocket.CONNECTING) this.ws.terminate();
    else this.ws.close(1000, 'agent closing');
    // A server that does not answer the close handshake must not hold the agent up.
    setTimeout(() => this.ws.terminate(), 1000).unref();
  }

  private settle(result: ResultMessage): void {
    if (typeof result.ref !== 'number') return;
    const waiting = this.pending.get(result.ref);
    if (!waiting) return;
    this.pending.delete(result.ref);
    waiting.resolve({ status: result.status, body: result.body });
  }

  /** Anything from the server proves the connection alive; silence past the limit cuts it. */
  private heard(): void {
    if (this.silence) clearTimeout(this.silence);
    this.silence = setTimeout(() => this.ws.terminate(), SILENCE_LIMIT_MS);
    this.silence.unref();
  }
}
