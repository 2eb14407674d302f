import type { Server } from 'node:http';
import { closeServer, listenOnLoopback } from '../../fakes/proxied-exchange-http.js';
import type { SentRequest } from '../../venues/support/ccxt-records.js';

/**
 * An exchange's HTTP API answered from recorded responses, for a real agent process: the agent
 * runs with `--proxy-url URL` (CCXT's proxyUrl), so each request arrives here as
 * `/<the exchange's URL>` (`/https://fapi.binance.com/fapi/v1/order?…`). `answer` gives the
 * recorded body; an error it throws whose message is CCXT's form of an exchange refusal
 * (`binance {"code":-2019,"msg":"Margin is insufficient."}`) goes back as HTTP 400 with the
 * exchange's JSON, as the exchange sends it. Every request is kept, as it was received.
 */
/** A request as received, with the API key header it carried (Binance: X-MBX-APIKEY). */
export interface ReceivedRequest extends SentRequest {
  apiKey: string | null;
}

export class RecordedExchangeServer {
  private constructor(
    private readonly server: Server,
    readonly url: string,
    readonly received: ReceivedRequest[],
  ) {}

  static async start(answer: (request: SentRequest) => unknown): Promise<RecordedExchangeServer> {
    const received: ReceivedRequest[] = [];
    const { server, url } = await listenOnLoopback((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = chunks.length > 0 ? Buffer.concat(chunks).toString('utf8') : undefined;
        // CCXT appends the exchange's URL to the proxy's (Binance URL-encodes it first).
        const raw = (req.url ?? '/').slice(1);
        const target = /^https?%3A/i.test(raw) ? decodeURIComponent(raw) : raw;
        const apiKey = req.headers['x-mbx-apikey'];
        const request: ReceivedRequest = {
          url: /^https?:\/\//.test(target) ? target : '',
          method: req.method ?? 'GET',
          body,
          apiKey: typeof apiKey === 'string' ? apiKey : null,
        };
        received.push(request);
        const send = (status: number, payload: unknown) => {
          if (res.destroyed) return;
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(payload));
        };
        if (request.url === '') return send(400, { code: -1100, msg: `not an exchange URL: ${req.url}` });
        Promise.resolve()
          .then(() => answer(request))
          .then(
            (body) => send(200, body),
            (error: Error) => {
              const refusal = /^\w+ (\{.*\})$/.exec(error.message);
              if (refusal) send(400, JSON.parse(refusal[1]!));
              else send(500, { code: -1000, msg: error.message });
            },
          );
      });
    });
    return new RecordedExchangeServer(server, url, received);
  }

  /** The requests received for one path of the exchange's API. */
  requests(method: string, path: string): ReceivedRequest[] {
    return this.received.filter((r) => r.method === method && new URL(r.url).pathname === path);
  }

  async stop(): Promise<void> {
    await closeServer(this.server);
  }
}
