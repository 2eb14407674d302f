import http from 'node:http';
import { FILLS_PATH } from '../protocol/ledger-report.js';
import https from 'node:https';
import { ErrorCode } from '../errors/catalog.js';
import type { AgentSignal } from '../protocol/agent-signal.js';
import {
  AgentConnectedError,
  AgentSetupError,
  AgentUnauthorizedError,
  ServerUnreachableError,
  TransientError,
} from './agent-errors.js';
import { type AgentReply, isAgentConnected } from './agent-reply.js';
import { speaksTls } from './tls-probe.js';

export interface AgentIdentity {
  id: string;
  name: string;
  accountId: string;
}

/** How much longer than the poll's own wait the client gives the server before giving up on it. */
const POLL_GRACE_MS = 15_000;
const REQUEST_TIMEOUT_MS = 15_000;

/**
 * TLS failures that mean the agent does not trust the server's certificate (self-signed, an
 * unknown CA, another name): the same at every retry until someone changes the setup. An
 * expired certificate is not among them: its renewal ends it without touching the agent.
 */
const UNTRUSTED_CERTIFICATE = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The agent endpoints over HTTP (docs/agents.md). 401 throws AgentUnauthorizedError; 5xx and
 * network failures throw TransientError. Uses its own keep-alive connection pool (not the
 * global fetch's) so `close()` really closes every connection it opened.
 */
export class AgentHttp {
  private readonly base: URL;
  private readonly pool: http.Agent;
  private readonly transport: typeof http | typeof https;

  constructor(
    server: string,
    private readonly token: string,
  ) {
    this.base = new URL(server.replace(/\/+$/, '') + '/');
    const secure = this.base.protocol === 'https:';
    this.transport = secure ? https : http;
    this.pool = secure
      ? new https.Agent({ keepAlive: true, maxSockets: 4 })
      : new http.Agent({ keepAlive: true, maxSockets: 4 });
  }

  async poll(waitSeconds: number, abort: AbortSignal): Promise<AgentSignal[]> {
    const reply = await this.call(
      'GET',
      `api/agent/signals?wait=${waitSeconds}`,
      undefined,
      waitSeconds * 1000 + POLL_GRACE_MS,
      abort,
    );
    if (isAgentConnected(reply)) {
      throw new AgentConnectedError(
        `poll answered 409 ${ErrorCode.AGENT_CONNECTED}: ${(reply.body as { detail?: string }).detail ?? ''}`,
      );
    }
    if (reply.status !== 200) throw new TransientError(`poll answered ${reply.status}: ${JSON.stringify(reply.body)}`);
    return (reply.body as { signals: AgentSignal[] }).signals;
  }

  /** The agent the token belongs to (`GET /api/agent`), with no other effect on the server. */
  async identify(abort?: AbortSignal): Promise<AgentIdentity> {
    const reply = await this.call('GET', 'api/agent', undefined, REQUEST_TIMEOUT_MS, abort);
    if (reply.status === 200 && isIdentity(reply.body)) return reply.body;
    // 401, 408, 429 and 5xx were dealt with in call(); what is left is no signalgate answer.
    throw new AgentSetupError(
      `${new URL('api/agent', this.base).href} answered ${reply.status}${reply.status === 200 ? ' with something other than an agent' : ''}, ` +
        `so ${this.base.href} is not a signalgate server; check --server: the server's base URL, like https://signals.example.com`,
    );
  }

  ack(id: string, ack: unknown, abort?: AbortSignal): Promise<AgentReply> {
    return this.call('POST', `api/agent/signals/${encodeURIComponent(id)}/ack`, ack, REQUEST_TIMEOUT_MS, abort);
  }

  /** Asks the server to halt the agent's account (`POST /api/agent/halt`): a loss rule was reached. */
  halt(body: { rule: string; reason: string }, abort?: AbortSignal): Promise<AgentReply> {
    return this.call('POST', 'api/agent/halt', body, REQUEST_TIMEOUT_MS, abort);
  }

  reportFills(report: unknown, abort?: AbortSignal): Promise<AgentReply> {
    return this.call('POST', FILLS_PATH.slice(1), report, REQUEST_TIMEOUT_MS, abort);
  }

  putState(state: unknown, abort?: AbortSignal): Promise<AgentReply> {
    return this.call('PUT', 'api/agent/state', state, REQUEST_TIMEOUT_MS, abort);
  }

  /** The setup error for an http:// URL whose server speaks HTTPS; null when it does not (an outage). */
  private async wrongScheme(): Promise<AgentSetupError | null> {
    const port = Number(this.base.port || 80);
    if (!(await speaksTls(this.base.hostname, port))) return null;
    const secure = new URL(this.base.href);
    secure.protocol = 'https:';
    secure.port = String(port);
    return new AgentSetupError(
      `the server at ${this.base.origin} speaks HTTPS, not plain HTTP; use --server ${secure.href.replace(/\/$/, '')}`,
    );
  }

  close(): void {
    this.pool.destroy();
  }

  private call(
    method: string,
    path: string,
    body: unknown,
    timeoutMs: number,
    abort?: AbortSignal,
  ): Promise<AgentReply> {
    const url = new URL(path, this.base);
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    return new Promise<AgentReply>((resolve, reject) => {
      if (abort?.aborted) return reject(new TransientError(`${method} ${url.pathname} aborted`));
      const req = this.transport.request(url, {
        method,
        agent: this.pool,
        headers: {
          authorization: `Bearer ${this.token}`,
          ...(payload && { 'content-type': 'application/json', 'content-length': payload.length }),
        },
      });
      // Before any response the server was not reached (or did not answer); after, it went away.
      const fail = (why: string, cause: unknown, answered: boolean) => {
        abort?.removeEventListener('abort', onAbort);
        const message = `${method} ${url.pathname} failed: ${why}`;
        reject(answered ? new TransientError(message, { cause }) : new ServerUnreachableError(message, { cause }));
      };
      const onAbort = () => req.destroy(new Error('aborted'));
      abort?.addEventListener('abort', onAbort, { once: true });
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
      req.on('error', (err) => {
        const code = (err as NodeJS.ErrnoException).code;
        if (code === 'ECONNRESET' && this.base.protocol === 'http:') {
          // A server speaking HTTPS resets a plain request, as a dying one would: ask which it is.
          void this.wrongScheme().then((setup) => {
            if (setup === null) return fail(err.message, err, false);
            abort?.removeEventListener('abort', onAbort);
            reject(setup);
          });
          return;
        }
        if (code === 'EPROTO' && this.base.protocol === 'https:' && /wrong version number/i.test(err.message)) {
          abort?.removeEventListener('abort', onAbort);
          const plain = new URL(this.base.href);
          plain.protocol = 'http:';
          plain.port = String(this.base.port || 443);
          return reject(
            new AgentSetupError(
              `the server at ${this.base.origin} answers plain HTTP, not HTTPS; ` +
                `if it serves no HTTPS, use --server ${plain.href.replace(/\/$/, '')}; if a proxy in front of it serves HTTPS, give the proxy's address`,
            ),
          );
        }
        if (code === undefined || !UNTRUSTED_CERTIFICATE.has(code)) return fail(err.message, err, false);
        abort?.removeEventListener('abort', onAbort);
        reject(
          new AgentSetupError(
            `the agent does not trust the certificate of ${this.base.origin} (${err.message}); ` +
              `if the server uses a certificate of its own (self-signed or a private CA), give the agent that CA: ` +
              `NODE_EXTRA_CA_CERTS=/path/to/ca.pem; if the name differs, use the name the certificate is for in --server`,
          ),
        );
      });
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (err) => fail(err.message, err, true));
        res.on('end', () => {
          abort?.removeEventListener('abort', onAbort);
          const status = res.statusCode ?? 0;
          const text = Buffer.concat(chunks).toString('utf8');
          if (status === 401) return reject(new AgentUnauthorizedError());
          if (status >= 500 || status === 429 || status === 408) {
            return reject(new TransientError(`${method} ${url.pathname} answered ${status}: ${text.slice(0, 200)}`));
          }
          let parsed: unknown = null;
          try {
            parsed = text ? JSON.parse(text) : null;
          } catch {
            parsed = text;
          }
          resolve({ status, body: parsed });
        });
      });
      req.end(payload);
    });
  }
}

function isIdentity(body: unknown): body is AgentIdentity {
  const agent = body as Partial<AgentIdentity> | null;
  return (
    typeof agent === 'object' && agent !== null && typeof agent.id === 'string' && typeof agent.accountId === 'string'
  );
}
