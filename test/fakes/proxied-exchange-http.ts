import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * The HTTP side the test exchanges share: a real agent reaches them through CCXT's `--proxy-url`,
 * so each request arrives as `/<the exchange's URL, URL-encoded>`; `/_control/…` is the tests' own.
 * What each exchange answers, signs and refuses stays in its own file.
 */

/** Writes a JSON answer, unless the client is gone; `written` once it is handed to the socket. */
export type Send = (status: number, payload: unknown, written?: () => void) => void;

/** A server on a free loopback port, and its URL with the trailing slash a proxy URL needs. */
export async function listenOnLoopback(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ server: Server; url: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { server, url: `http://127.0.0.1:${port}/` };
}

/** Closes the server at once, open keep-alive connections too. */
export async function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

/**
 * Reads the whole request, then hands it on: `/_control/…` to `control` (its answer as 200, its
 * error as 400 with the message), a proxied exchange URL to `exchange`, anything else a 404 with
 * `notExchange`'s body (in the exchange's own error shape).
 */
export function serveProxied(
  req: IncomingMessage,
  res: ServerResponse,
  handlers: {
    control(method: string, url: URL): unknown;
    notExchange(message: string): unknown;
    exchange(target: URL, body: string, send: Send): void;
  },
): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    const send: Send = (status, payload, written) => {
      if (res.destroyed) return;
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(payload), written);
    };
    const raw = (req.url ?? '/').slice(1);
    if (raw.startsWith('_control/')) {
      try {
        send(200, handlers.control(req.method ?? 'GET', new URL(`http://x/${raw}`)));
      } catch (error) {
        send(400, { error: (error as Error).message });
      }
      return;
    }
    const target = /^https?%3A/i.test(raw) ? decodeURIComponent(raw) : raw;
    if (!/^https?:\/\//.test(target)) return send(404, handlers.notExchange(`not an exchange URL: ${req.url}`));
    handlers.exchange(new URL(target), body, send);
  });
}

/** Whether `signature` is the hex HMAC-SHA256 of `payload` under `secret` (compared in constant time). */
export function hexHmacMatches(secret: string, payload: string, signature: string): boolean {
  const expected = createHmac('sha256', secret).update(payload).digest('hex');
  return signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
}

/** A control request's number parameter `name`, or an error naming it and the endpoint. */
export function controlNumber(what: string, q: Record<string, string>): (name: string) => number {
  return (name) => {
    const value = Number(q[name]);
    if (q[name] === undefined || !Number.isFinite(value)) throw new Error(`/_control/${what} needs a number ${name}`);
    return value;
  };
}
