import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NormalizedSignal } from '../../../src/language/index.js';
import type { AgentSignal } from '../../../src/protocol/agent-signal.js';
import type { EffectiveRiskRules } from '../../../src/risk/risk-rules.js';

export interface Ack {
  status: 'executed' | 'rejected' | 'failed';
  message: string | null;
  result?: any;
}

/**
 * The agent's side of a signalgate server, as docs/agents.md describes it for long-poll
 * (`GET /api/agent`, `GET /api/agent/signals`, `POST …/ack`, `PUT /api/agent/state`), plus
 * `POST /api/agent/halt`: a test hands a real agent process deliveries carrying `risk` rules or a
 * `flatten` exactly as the server's store will (the server side of the rules is built beside
 * this), and reads its acks and halt requests. `haltStatus` is what the halt answers (404 until
 * a server has halts).
 */
export class AgentEndpoints {
  readonly acks = new Map<string, Ack>();
  readonly halts: { rule: string; reason: string }[] = [];
  haltStatus = 404;
  private readonly queue: AgentSignal[] = [];
  private seq = 0;
  private waiting: (() => void)[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<AgentEndpoints> {
    let endpoints: AgentEndpoints | null = null;
    const server = createServer((req, res) => endpoints!.serve(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    endpoints = new AgentEndpoints(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return endpoints;
  }

  async stop(): Promise<void> {
    for (const wake of this.waiting.splice(0)) wake();
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Queues a delivery; answers its id. */
  deliver(signal: NormalizedSignal, extra: { risk?: EffectiveRiskRules; flatten?: { reason: string } } = {}): string {
    this.seq += 1;
    const id = `sig_test${this.seq}`;
    const now = Date.now();
    this.queue.push({
      id,
      seq: this.seq,
      sourceId: 'src_test',
      receivedAt: new Date(now).toISOString(),
      expiresAt: new Date(now + 120_000).toISOString(),
      signal,
      ...extra,
    });
    for (const wake of this.waiting.splice(0)) wake();
    return id;
  }

  private serve(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const send = (status: number, body: unknown) => {
        if (res.destroyed) return;
        res.writeHead(status, { 'content-type': 'application/json' });
        res.end(JSON.stringify(body));
      };
      const url = new URL(req.url ?? '/', this.url);
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as any) : null;
      const path = url.pathname;
      if (req.method === 'GET' && path === '/api/agent')
        return send(200, { id: 'agt_test', name: 'risk', accountId: 'acc_test' });
      if (req.method === 'GET' && path === '/api/agent/signals') {
        const answer = () => {
          const signals = this.queue.filter((s) => !this.acks.has(s.id));
          send(200, { signals });
        };
        if (this.queue.some((s) => !this.acks.has(s.id))) return answer();
        const wait = Math.min(Number(url.searchParams.get('wait') ?? 0), 2);
        const timer = setTimeout(answer, wait * 1000);
        this.waiting.push(() => {
          clearTimeout(timer);
          answer();
        });
        return;
      }
      const ack = /^\/api\/agent\/signals\/([^/]+)\/ack$/.exec(path);
      if (req.method === 'POST' && ack) {
        this.acks.set(decodeURIComponent(ack[1]!), body as Ack);
        return send(200, { signalId: ack[1], status: (body as Ack).status });
      }
      if (req.method === 'PUT' && path === '/api/agent/state') return send(200, { ok: true });
      if (req.method === 'POST' && path === '/api/agent/halt') {
        this.halts.push(body as { rule: string; reason: string });
        return send(this.haltStatus, this.haltStatus === 404 ? { code: 'NOT_FOUND' } : { halted: true });
      }
      send(404, { code: 'NOT_FOUND' });
    });
  }
}
