import { randomUUID } from 'node:crypto';
import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import { hexHmacMatches } from './proxied-exchange-http.js';

/** The private topics this test exchange pushes: the all-in-one `order` and its linear one. */
const ORDER_TOPICS: ReadonlySet<string> = new Set(['order', 'order.linear']);

interface Connection {
  readonly connId: string;
  authenticated: boolean;
  readonly topics: Set<string>;
}

/**
 * Bybit v5's private websocket stream, as its documentation describes it, for the Bybit test
 * exchange: a websocket at `wss://stream.bybit.com/v5/private` (the testnet and demo hosts too,
 * `max_active_time` ignored). `{"op": "auth", "args": [apiKey, expires, signature]}` with the hex
 * HMAC-SHA256 of `GET/realtime${expires}` under the secret, expires (ms) later than now; answered
 * `{"success", "ret_msg", "op": "auth", "conn_id"}`. `{"op": "subscribe", "args": [topics]}`
 * answered `{"success", "ret_msg", "op": "subscribe", "conn_id", "req_id"}` (private topics only
 * once authenticated). `{"op": "ping"}` answered, as on private channels,
 * `{"req_id", "op": "pong", "args": [now in ms], "conn_id"}`. The `order` topic (and
 * `order.linear`) pushes `{"id", "topic", "creationTime", "data": [order]}` at every change of an
 * order's state, the order with the fields of the REST order list plus `category`.
 *
 * It arrives through the proxy like the REST requests: `ws://<exchange>/<the wss URL>`.
 * What it chose where the documentation says nothing: another path is refused at the upgrade
 * (HTTP 404); a failed auth answers `success: false` with `ret_msg` "Invalid apikey", "Params
 * Error" (expires missing or past) or "Invalid sign", and the connection stays open,
 * unauthenticated; a second auth on an authenticated connection answers "Repeat auth"; topics
 * other than the order ones are refused ("… not in this test exchange"); an unknown op answers
 * `success: false`. The idle cut (10 minutes without a ping) is not kept.
 */
export class BybitPrivateStream {
  private readonly sockets = new Map<WebSocket, Connection>();
  private readonly server = new WebSocketServer({ noServer: true });
  /** Connections accepted so far, for the tests. */
  connections = 0;
  /** Auth requests refused so far, for the tests. */
  refusedAuths = 0;
  /** Connections still to refuse at the upgrade (HTTP 503), and auths as badly signed (a test's outage). */
  private refusing = { upgrade: 0, auth: 0 };

  constructor(
    server: Server,
    private readonly keys: { apiKey: string; secret: string },
  ) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
  }

  /** An order's new state (as the REST order list answers it), to every connection subscribed to it. */
  order(order: Record<string, unknown>): void {
    for (const [socket, connection] of this.sockets) {
      if (!connection.authenticated) continue;
      for (const topic of connection.topics) {
        socket.send(
          JSON.stringify({
            id: randomUUID(),
            topic,
            creationTime: Date.now(),
            data: [{ category: 'linear', ...order }],
          }),
        );
      }
    }
  }

  /**
   * The next `count` connections refused at the upgrade (as an outage of the stream's host), or
   * the next `count` auths answered as badly signed (as when the key's secret changed).
   */
  refuse(at: 'upgrade' | 'auth', count: number): void {
    this.refusing[at] = count;
  }

  /** The connections dropped by the exchange (a network fault, a restart on Bybit's side). */
  drop(): void {
    for (const socket of this.sockets.keys()) socket.terminate();
    this.sockets.clear();
  }

  stop(): void {
    this.drop();
    this.server.close();
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const raw = (req.url ?? '/').slice(1);
    const target = /^wss?%3A/i.test(raw) ? decodeURIComponent(raw) : raw;
    let url: URL | null = null;
    try {
      url = /^wss?:\/\//.test(target) ? new URL(target) : null;
    } catch {
      url = null;
    }
    if (url === null || !/^stream(-testnet|-demo)?\.bybit\.com$/.test(url.hostname) || url.pathname !== '/v5/private') {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    if (this.refusing.upgrade > 0) {
      this.refusing.upgrade -= 1;
      socket.end('HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    this.server.handleUpgrade(req, socket, head, (ws) => {
      this.connections += 1;
      const connection: Connection = {
        connId: `${randomUUID()}-${this.connections}`,
        authenticated: false,
        topics: new Set(),
      };
      this.sockets.set(ws, connection);
      ws.on('message', (data: RawData) => this.received(ws, connection, data.toString()));
      ws.on('close', () => this.sockets.delete(ws));
      ws.on('error', () => this.sockets.delete(ws));
    });
  }

  private received(ws: WebSocket, connection: Connection, text: string): void {
    let request: { op?: unknown; args?: unknown; req_id?: unknown };
    try {
      request = JSON.parse(text) as typeof request;
    } catch {
      ws.send(JSON.stringify({ success: false, ret_msg: 'error:invalid json', conn_id: connection.connId }));
      return;
    }
    const args = Array.isArray(request.args) ? (request.args as unknown[]) : [];
    const reqId = request.req_id === undefined ? {} : { req_id: String(request.req_id) };
    const answer = (op: string, success: boolean, message = '') =>
      ws.send(JSON.stringify({ success, ret_msg: message, op, conn_id: connection.connId, ...reqId }));
    switch (request.op) {
      case 'auth': {
        const refused = this.refusal(connection, args);
        if (refused !== null) {
          this.refusedAuths += 1;
          return answer('auth', false, refused);
        }
        connection.authenticated = true;
        return answer('auth', true);
      }
      case 'subscribe': {
        const topics = args.map(String);
        const unknown = topics.find((t) => !ORDER_TOPICS.has(t));
        if (unknown !== undefined) return answer('subscribe', false, `topic ${unknown} is not in this test exchange`);
        if (!connection.authenticated) return answer('subscribe', false, 'Request not authorized');
        for (const topic of topics) connection.topics.add(topic);
        return answer('subscribe', true);
      }
      case 'unsubscribe':
        for (const topic of args.map(String)) connection.topics.delete(topic);
        return answer('unsubscribe', true);
      case 'ping':
        ws.send(JSON.stringify({ ...reqId, op: 'pong', args: [String(Date.now())], conn_id: connection.connId }));
        return;
      default:
        return answer(String(request.op ?? ''), false, `error:invalid op ${String(request.op)}`);
    }
  }

  /** Why an auth request is refused, or null when it is good. */
  private refusal(connection: Connection, args: unknown[]): string | null {
    if (connection.authenticated) return 'Repeat auth';
    const [key, expires, signature] = args;
    if (key !== this.keys.apiKey) return 'Invalid apikey';
    const at = Number(expires);
    if (expires === undefined || !Number.isFinite(at) || at <= Date.now()) return 'Params Error';
    if (this.refusing.auth > 0) {
      this.refusing.auth -= 1;
      return 'Invalid sign';
    }
    if (typeof signature !== 'string' || !hexHmacMatches(this.keys.secret, `GET/realtime${String(expires)}`, signature))
      return 'Invalid sign';
    return null;
  }
}
