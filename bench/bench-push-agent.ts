import WebSocket from 'ws';
import type { AgentSignal } from '../src/agent/agent-client.js';
import { PUSH_PATH } from '../src/agent/websocket-link.js';
import { type BenchAgentEvents, EXECUTED, SignalQueue } from './bench-agent.js';
import { now } from './raw-http-connection.js';

/**
 * A benchmark agent on the WebSocket (`/api/agent/ws`): takes what the server pushes and
 * acknowledges each signal on the same connection (`{type:"ack", ref}`), in order and without
 * waiting for the acks before it, as the agent (`ExecutingAgent` on `AgentClient`) does, without the client library's per-message timers, promises and reconnection:
 * a connection that ends stays ended (the run then reports the signals not held).
 */
export class BenchPushAgent {
  private readonly ws: WebSocket;
  private readonly signals = new SignalQueue();
  private nextRef = 1;

  constructor(
    server: string,
    token: string,
    private readonly events: BenchAgentEvents,
  ) {
    this.ws = new WebSocket(server.replace(/\/+$/, '').replace(/^http/i, 'ws') + PUSH_PATH, {
      headers: { authorization: `Bearer ${token}` },
    });
    this.ws.on('error', () => {});
    this.ws.on('message', (data: Buffer) => {
      const receivedAt = now();
      const message = JSON.parse(data.toString()) as { type: string; signals?: AgentSignal[]; status?: number };
      if (message.type === 'signals') {
        this.signals.offer(
          message.signals!.map((signal) => signal.id),
          { askedAt: null, receivedAt },
        );
        this.takeAll();
      } else if (message.type === 'result') {
        this.events.acked(message.status === 200);
      } else if (message.type === 'hello') this.events.ready();
    });
  }

  close(): void {
    this.ws.terminate();
  }

  private takeAll(): void {
    for (const { id, carrier } of this.signals.takeAll()) {
      this.events.held(id, carrier);
      this.ws.send(JSON.stringify({ type: 'ack', id, ...EXECUTED, ref: this.nextRef++ }));
    }
  }
}
