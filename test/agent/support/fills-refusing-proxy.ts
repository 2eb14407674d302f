import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { WebSocket, WebSocketServer } from 'ws';
import { forwardHttp } from './forward-http.js';

/**
 * A server older than the WebSocket `fills` message, made from the real one: a reverse proxy
 * that forwards HTTP and WebSocket traffic both ways, except the agent's `fills` messages, which
 * it answers itself as the push session answered them before it knew the type (400
 * INVALID_REQUEST, param 'type'). Everything else (hello, signals, acks, state, the HTTP
 * endpoints) is the real server's.
 */
export class FillsRefusingProxy {
  /** The `fills` messages refused so far. */
  refusedFills = 0;
  private constructor(
    private readonly server: http.Server,
    private readonly sockets: WebSocketServer,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<FillsRefusingProxy> {
    const upstream = new URL(target);
    let proxy: FillsRefusingProxy | null = null;
    const server = http.createServer((req, res) => forwardHttp(upstream, req, res));
    const sockets = new WebSocketServer({ noServer: true });
    server.on('upgrade', (req, socket, head) => {
      const wsUrl = new URL(req.url ?? '/', upstream);
      wsUrl.protocol = 'ws:';
      const far = new WebSocket(wsUrl, { headers: { authorization: req.headers.authorization ?? '' } });
      far.on('unexpected-response', (_r, answer) => {
        socket.end(`HTTP/1.1 ${answer.statusCode ?? 502} Refused\r\ncontent-length: 0\r\nconnection: close\r\n\r\n`);
        far.terminate();
      });
      far.on('error', () => socket.destroy());
      // Messages the server sends before the agent's side is up (its hello) wait for it.
      const early: Array<[WebSocket.RawData, boolean]> = [];
      let near: WebSocket | null = null;
      far.on('message', (data, isBinary) =>
        near ? near.send(data, { binary: isBinary }) : early.push([data, isBinary]),
      );
      far.on('open', () =>
        sockets.handleUpgrade(req, socket, head, (ws) => {
          near = ws;
          for (const [data, isBinary] of early.splice(0)) ws.send(data, { binary: isBinary });
          ws.on('message', (data, isBinary) => {
            const message = parse(data.toString());
            if (message?.type !== 'fills') return far.send(data, { binary: isBinary });
            proxy!.refusedFills++;
            ws.send(JSON.stringify(oldServerRefusal(message.ref)));
          });
          ws.on('close', (code) => far.close(sendable(code)));
        }),
      );
      far.on('close', (code, reason) => near?.close(sendable(code), reason));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new FillsRefusingProxy(server, sockets, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return proxy;
  }

  async close(): Promise<void> {
    for (const ws of this.sockets.clients) ws.terminate();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** The old push session's answer to a message type it did not know. */
function oldServerRefusal(ref: unknown) {
  return {
    type: 'result',
    ref: typeof ref === 'string' || typeof ref === 'number' ? ref : null,
    status: 400,
    body: {
      type: 'urn:signalgate:problem:INVALID_REQUEST',
      title: 'Invalid request',
      status: 400,
      code: 'INVALID_REQUEST',
      detail: '\'type\' must be "ack" or "state"',
      param: 'type',
    },
  };
}

function parse(text: string): { type?: unknown; ref?: unknown } | null {
  try {
    return JSON.parse(text) as { type?: unknown; ref?: unknown };
  } catch {
    return null;
  }
}

/** Close codes a peer may not send itself (1005, 1006: no code, abnormal) become a plain close. */
function sendable(code: number): number {
  return code === 1005 || code === 1006 ? 1000 : code;
}
