import type { IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import type { FastifyReply } from 'fastify';
import type { Logger } from 'pino';
import { ErrorCode } from '../errors/catalog.js';
import type { ClientAddressOf } from './client-address.js';
import { sendProblem } from './send-problem.js';

/** Which credential a wrong token was presented as. */
export type CredentialKind = 'admin' | 'metrics' | 'dashboard_sign_in';
export const CREDENTIAL_KINDS: readonly CredentialKind[] = ['admin', 'metrics', 'dashboard_sign_in'];

/** Wrong tokens an address may present in one window before its tokens are no longer looked at. */
export const WRONG_TOKENS_PER_WINDOW = 5;
/** The window: counts start again, and the log line of each address is written, this often. */
export const WRONG_TOKEN_WINDOW_MS = 60_000;
/** Addresses counted apart in one window; past them, all others share one count. */
export const MAX_COUNTED_ADDRESSES = 10_000;
/** What the addresses past the first MAX_COUNTED_ADDRESSES may present together in one window. */
export const WRONG_TOKENS_PER_WINDOW_OTHERS = 100;

const OTHERS = 'other';

interface Count {
  wrong: number;
  refused: number;
  kinds: Set<CredentialKind>;
}

/**
 * Wrong admin and metrics tokens (and dashboard sign-ins), counted per client address (an IPv6
 * address by its /64, which one host usually has whole). After WRONG_TOKENS_PER_WINDOW in a
 * window, that address's tokens are not looked at until the window ends: answered 429 with
 * Retry-After, right or wrong, so guessing on gains nothing. An address that presents the right
 * token is never counted, so it is never slowed. Memory is bounded: addresses past the first
 * MAX_COUNTED_ADDRESSES of a window share one count. Each address is logged once per window
 * with its counts, never a line per request.
 */
export class WrongTokens {
  private counts = new Map<string, Count>();
  private windowStartedAt: number;
  /** Requests counted here: the window's line stands for them, in place of an access line each. */
  private readonly counted = new WeakSet<IncomingMessage>();
  private readonly timer: NodeJS.Timeout;
  /** Since the start, by credential: wrong tokens looked at, and tokens refused unexamined. */
  readonly totals = { wrong: new Map<CredentialKind, number>(), refused: new Map<CredentialKind, number>() };

  constructor(
    private readonly logger: Logger,
    private readonly clientAddressOf: ClientAddressOf,
    private readonly now: () => number = Date.now,
  ) {
    this.windowStartedAt = now();
    this.timer = setInterval(() => this.flush(), WRONG_TOKEN_WINDOW_MS);
    this.timer.unref();
  }

  /**
   * Before a presented token is looked at: the refusal already answered (429), or undefined when
   * the address may present it.
   */
  refuse(
    request: { raw: IncomingMessage },
    reply: FastifyReply,
    kind: CredentialKind,
    param: string,
  ): FastifyReply | undefined {
    const key = this.keyOf(request.raw);
    const count = this.counts.get(key);
    const limit = key === OTHERS ? WRONG_TOKENS_PER_WINDOW_OTHERS : WRONG_TOKENS_PER_WINDOW;
    if (count === undefined || count.wrong < limit) return undefined;
    count.refused++;
    count.kinds.add(kind);
    this.counted.add(request.raw);
    add(this.totals.refused, kind);
    const seconds = Math.max(1, Math.ceil((this.windowStartedAt + WRONG_TOKEN_WINDOW_MS - this.now()) / 1000));
    reply.header('retry-after', String(seconds));
    return sendProblem(reply, [
      {
        code: ErrorCode.TOO_MANY_WRONG_TOKENS,
        param,
        detail: `this address sent ${limit} wrong tokens within a minute, so none is looked at for ${seconds} s; wait that long (Retry-After) and send the right one: the admin token${kind === 'metrics' ? ' or SIGNALGATE_METRICS_TOKEN' : ''}`,
      },
    ]);
  }

  /** A presented token was wrong. */
  wrong(request: { raw: IncomingMessage }, kind: CredentialKind): void {
    add(this.totals.wrong, kind);
    const key = this.keyOf(request.raw);
    let count = this.counts.get(key);
    if (count === undefined) {
      count = { wrong: 0, refused: 0, kinds: new Set() };
      this.counts.set(key, count);
    }
    count.wrong++;
    count.kinds.add(kind);
    this.counted.add(request.raw);
  }

  /** Whether the request presented a wrong token or was refused for too many: logged by the window's line. */
  isCounted(req: IncomingMessage): boolean {
    return this.counted.has(req);
  }

  /** Writes the window's counts, one line per address, and starts a new window. */
  flush(): void {
    const since = new Date(this.windowStartedAt).toISOString();
    const counts = this.counts;
    this.counts = new Map();
    this.windowStartedAt = this.now();
    for (const [clientAddress, { wrong, refused, kinds }] of counts) {
      this.logger.warn(
        { clientAddress, wrong, refused, credentials: [...kinds], since },
        `${wrong} wrong token${wrong === 1 ? '' : 's'}${refused > 0 ? `, then ${refused} refused unexamined (429)` : ''} from ${clientAddress === OTHERS ? `addresses past the first ${MAX_COUNTED_ADDRESSES}` : 'one address'}`,
      );
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
  }

  private keyOf(req: IncomingMessage): string {
    const key = addressKey(this.clientAddressOf(req));
    return this.counts.has(key) || this.counts.size < MAX_COUNTED_ADDRESSES ? key : OTHERS;
  }
}

/** An IPv6 address by its /64 (a host is usually given one whole); any other address as it is. */
function addressKey(address: string): string {
  if (!address.includes(':') || !ipaddr.IPv6.isValid(address)) return address;
  const parts = ipaddr.IPv6.parse(address).parts.slice(0, 4);
  return `${parts.map((part) => part.toString(16)).join(':')}::/64`;
}

function add(totals: Map<CredentialKind, number>, kind: CredentialKind): void {
  totals.set(kind, (totals.get(kind) ?? 0) + 1);
}
