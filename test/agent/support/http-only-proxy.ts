import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { forwardHttp } from './forward-http.js';

/**
 * A reverse proxy in front of the server, standing for the network between an agent and
 * signalgate: it forwards plain HTTP, never WebSocket upgrades (like a proxy without
 * WebSocket support), and can be told to fail acknowledgements (503) as a broken path would,
 * or to hold them (forwarded only on `releaseAcks()`) as a slow path would.
 */
export class HttpOnlyProxy {
  refuseAcks = false;
  holdAcks = false;
  private held: Array<() => void> = [];
  private constructor(
    private readonly server: http.Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<HttpOnlyProxy> {
    const upstream = new URL(target);
    let proxy: HttpOnlyProxy | null = null;
    const server = http.createServer((req, res) => {
      if (proxy?.refuseAcks && req.method === 'POST' && /\/ack$/.test(req.url ?? '')) {
        res.writeHead(503, { 'content-type': 'text/plain' }).end('upstream unavailable');
        req.resume();
        return;
      }
      const pass = () => forwardHttp(upstream, req, res);
      if (proxy?.holdAcks && req.method === 'POST' && /\/ack$/.test(req.url ?? '')) proxy.held.push(pass);
      else pass();
    });
    server.on('upgrade', (_req, socket) => {
      socket.end('HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    proxy = new HttpOnlyProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return proxy;
  }

  /** Acks held so far (while `holdAcks`). */
  get heldAcks(): number {
    return this.held.length;
  }

  /** Stops holding acks and forwards those held. */
  releaseAcks(): void {
    this.holdAcks = false;
    for (const forward of this.held.splice(0)) forward();
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
