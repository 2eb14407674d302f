import type { IncomingMessage, Server } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';

/** A listenKey is valid this long after its creation or its last keepalive (Binance: 60 minutes). */
export const LISTEN_KEY_VALID_MS = 60 * 60_000;

/**
 * Binance USDⓈ-M's user data stream, as its documentation describes it, for the Binance test
 * exchange: `POST /fapi/v1/listenKey` answers the account's active listenKey (extended by 60
 * minutes) or a new one, `PUT` extends it (-1125 "This listenKey does not exist." when there is
 * none), `DELETE` closes its streams and invalidates it. A websocket at `/ws/<listenKey>` (also
 * under `/private`, and `/private/ws?listenKey=<listenKey>`, the form CCXT opens) carries the
 * account's events: `ORDER_TRADE_UPDATE`, `ALGO_UPDATE`, `ACCOUNT_UPDATE`. When the key expires,
 * `listenKeyExpired` is pushed and no more events follow on that connection, which stays open.
 *
 * It arrives through the proxy like the REST requests: `ws://<exchange>/<the wss URL>`.
 * What it chose where the documentation says nothing: a connection naming a key that is not the
 * active one is refused at the upgrade (HTTP 400); the expiry is checked whenever an event is sent.
 */
export class BinanceUserDataStream {
  private key: { value: string; expiresAt: number } | null = null;
  private readonly sockets = new Map<WebSocket, string>();
  private readonly server = new WebSocketServer({ noServer: true });
  private made = 0;
  /** Connections accepted so far, for the tests. */
  connections = 0;

  constructor(server: Server) {
    server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => this.upgrade(req, socket, head));
  }

  /** `POST /fapi/v1/listenKey`. */
  start(): { listenKey: string } {
    this.expireIfDue();
    if (this.key === null) {
      this.made += 1;
      // 64 characters, as Binance's are.
      this.key = { value: `lk${this.made}`.padEnd(64, 'x'), expiresAt: 0 };
    }
    this.key.expiresAt = Date.now() + LISTEN_KEY_VALID_MS;
    return { listenKey: this.key.value };
  }

  /** `PUT /fapi/v1/listenKey`: null when there is no active key (-1125). */
  keepAlive(): { listenKey: string } | null {
    this.expireIfDue();
    if (this.key === null) return null;
    this.key.expiresAt = Date.now() + LISTEN_KEY_VALID_MS;
    return { listenKey: this.key.value };
  }

  /** `DELETE /fapi/v1/listenKey`. */
  close(): Record<string, never> {
    this.key = null;
    for (const socket of this.sockets.keys()) socket.close(1000);
    this.sockets.clear();
    return {};
  }

  /** An event to every connection of the active key. */
  send(event: Record<string, unknown>): void {
    this.expireIfDue();
    const text = JSON.stringify(event);
    for (const [socket, key] of this.sockets) if (key === this.key?.value) socket.send(text);
  }

  /** The connections dropped by the exchange (as at Binance's 24-hour mark, or a network fault). */
  drop(): void {
    for (const socket of this.sockets.keys()) socket.terminate();
    this.sockets.clear();
  }

  /** The key expires now (a test that cannot wait an hour). */
  expireNow(): void {
    if (this.key !== null) this.key.expiresAt = 0;
    this.expireIfDue();
  }

  stop(): void {
    this.drop();
    this.server.close();
  }

  private expireIfDue(): void {
    if (this.key === null || Date.now() < this.key.expiresAt) return;
    const event = JSON.stringify({ e: 'listenKeyExpired', E: Date.now(), listenKey: this.key.value });
    for (const [socket, key] of this.sockets) if (key === this.key.value) socket.send(event);
    this.key = null;
  }

  private upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): void {
    const raw = (req.url ?? '/').slice(1);
    const target = /^wss?%3A/i.test(raw) ? decodeURIComponent(raw) : raw;
    let key: string | undefined;
    if (/^wss?:\/\//.test(target)) {
      const url = new URL(target);
      key = url.searchParams.get('listenKey') ?? /^(?:\/private)?\/ws\/([^/]+)$/.exec(url.pathname)?.[1] ?? undefined;
    }
    this.expireIfDue();
    if (key === undefined || key !== this.key?.value) {
      socket.end('HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n');
      return;
    }
    this.server.handleUpgrade(req, socket, head, (ws) => {
      this.connections += 1;
      this.sockets.set(ws, key);
      ws.on('close', () => this.sockets.delete(ws));
      ws.on('error', () => this.sockets.delete(ws));
    });
  }
}
