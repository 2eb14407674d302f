import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver took. */
export interface Received {
  receiver: 'telegram' | 'discord' | 'slack' | 'webhook';
  path: string;
  headers: http.IncomingHttpHeaders;
  raw: Buffer;
  body: any;
}

/**
 * Local stand-ins for the receivers notifications go to, checking what their documentation
 * requires and answering as they do:
 * - Telegram Bot API `POST /bot<token>/sendMessage`: JSON with `chat_id` and a non-empty `text` of
 *   at most 4096 characters; answers `{ok: true, result: {...}}`, or `{ok: false, error_code, description}`.
 * - Discord webhook `POST /api/webhooks/<id>/<token>`: JSON with `content` (at most 2000
 *   characters) or `embeds`; answers 204 (no `?wait=true`), or 400 `{message, code: 50006}`.
 * - Slack incoming webhook `POST /services/T/B/X`: JSON with `text` or `blocks`; answers 200
 *   `ok` (text/plain), or 400 `no_text` / `invalid_payload`.
 * - A plain webhook `POST /hook`: takes any JSON, answers 200.
 * `down()` makes every path answer 503 until `up()`.
 */
export class NotificationReceivers {
  readonly received: Received[] = [];
  private server: http.Server;
  private isDown = false;
  url = '';

  constructor(private readonly botToken = '123456:TEST-token') {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => this.handle(req, res, Buffer.concat(chunks)));
    });
  }

  async start(port = 0): Promise<this> {
    await new Promise<void>((resolve) => this.server.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  down(): void {
    this.isDown = true;
  }

  up(): void {
    this.isDown = false;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  of(receiver: Received['receiver']): Received[] {
    return this.received.filter((r) => r.receiver === receiver);
  }

  private handle(req: http.IncomingMessage, res: http.ServerResponse, raw: Buffer): void {
    const path = req.url ?? '';
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (this.isDown) {
      res.writeHead(503, { 'content-type': 'text/plain' });
      res.end('down for maintenance');
      return;
    }
    let body: any = null;
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = null;
    }
    const take = (receiver: Received['receiver']) =>
      this.received.push({ receiver, path, headers: req.headers, raw, body });

    const telegram = /^\/bot([^/]+)\/sendMessage$/.exec(path);
    if (telegram) {
      if (telegram[1] !== this.botToken) return json(401, { ok: false, error_code: 401, description: 'Unauthorized' });
      if (!body || body.chat_id === undefined || body.chat_id === '') {
        return json(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' });
      }
      if (typeof body.text !== 'string' || body.text.trim() === '') {
        return json(400, { ok: false, error_code: 400, description: 'Bad Request: message text is empty' });
      }
      if (body.text.length > 4096) {
        return json(400, { ok: false, error_code: 400, description: 'Bad Request: message is too long' });
      }
      take('telegram');
      return json(200, {
        ok: true,
        result: { message_id: this.received.length, chat: { id: Number(body.chat_id) }, date: 0, text: body.text },
      });
    }
    if (/^\/api\/webhooks\/\d+\/[\w-]+$/.test(path)) {
      if (req.headers['content-type'] !== 'application/json' || !body) {
        return json(400, { message: 'Cannot send an empty message', code: 50006 });
      }
      const hasContent = typeof body.content === 'string' && body.content.trim() !== '';
      if (!hasContent && !Array.isArray(body.embeds)) {
        return json(400, { message: 'Cannot send an empty message', code: 50006 });
      }
      if (hasContent && body.content.length > 2000) {
        return json(400, { message: 'Invalid Form Body', code: 50035 });
      }
      take('discord');
      res.writeHead(204);
      res.end();
      return;
    }
    if (/^\/services\/\w+\/\w+\/\w+$/.test(path)) {
      res.setHeader('content-type', 'text/plain');
      if (!body) {
        res.writeHead(400);
        res.end('invalid_payload');
        return;
      }
      if (typeof body.text !== 'string' && !Array.isArray(body.blocks)) {
        res.writeHead(400);
        res.end('no_text');
        return;
      }
      take('slack');
      res.writeHead(200);
      res.end('ok');
      return;
    }
    if (path === '/hook') {
      take('webhook');
      return json(200, { received: true });
    }
    res.writeHead(404);
    res.end();
  }
}
