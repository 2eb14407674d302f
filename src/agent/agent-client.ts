import type { HelloMessage } from '../protocol/push-protocol.js';
import type { LedgerReport } from '../protocol/ledger-report.js';
import type { ProblemBody } from '../errors/problem-body.js';
import type { AgentSignal } from '../protocol/agent-signal.js';
import type { AckStatus, AckTimings, Delivery } from '../protocol/delivery.js';
import {
  AgentClosedError,
  AgentConnectedError,
  AgentSetupError,
  AgentUnauthorizedError,
  ServerUnreachableError,
  TransientError,
} from './agent-errors.js';
import { AgentHttp, type AgentIdentity } from './agent-http.js';
import { type AgentLog, silentLog } from './agent-log.js';
import { type AckAnswer, type AgentReply, isAgentConnected, isUnknownType } from './agent-reply.js';
import { Backoff, sleep } from './backoff.js';
import { SignalInbox } from './signal-inbox.js';
import { type LinkEnd, WebSocketLink } from './websocket-link.js';

export type { AgentSignal, AckAnswer };

/**
 * Snapshots are sent at most once per this interval (the latest when it comes): an account
 * taking a signal every few milliseconds would otherwise have the server store one per signal,
 * for a dashboard no reader refreshes that often.
 */
export const STATE_SPACING_MS = 250;
/** How long a stop waits for the account's last snapshot to reach the server. */
const LAST_STATE_MS = 2_000;

/** `auto`: WebSocket, falling back to long-poll when the WebSocket cannot be set up. */
export type TransportChoice = 'auto' | 'websocket' | 'long-poll';

export interface AgentClientOptions {
  /** The signalgate base URL, e.g. `http://127.0.0.1:8080`. */
  server: string;
  /** The agent token from `POST /api/admin/accounts/{id}/agents`. */
  token: string;
  transport?: TransportChoice;
  log?: AgentLog;
  /** Seconds a long-poll holds when nothing is pending (0–30); default 25. */
  pollWaitSeconds?: number;
  /** After falling back to long-poll, how long before the WebSocket is tried again; default 60 s. */
  webSocketRetryMs?: number;
  /** Reconnect delays: doubling from `initialMs` (default 250) up to `maxMs` (default 10 000), jittered. */
  backoff?: { initialMs?: number; maxMs?: number };
  /** Called whenever the client connects (transport set) or loses its connection (transport null). */
  onStatus?: (status: { transport: 'websocket' | 'long-poll' | null; reason?: string }) => void;
}

/** What the agent did with a signal, as acknowledged to the server. */
export interface Outcome {
  status: AckStatus;
  /** A sentence for the log, e.g. the reason a signal was rejected. */
  message?: string | null;
  /** Anything JSON the platform reports (fills, tickets). */
  result?: unknown;
  /** When the agent decided, sent, had the venue's answer, learnt of the fill (AckTimings). */
  timings?: AckTimings;
}

/**
 * The agent side of signalgate's delivery (docs/agents.md), for the paper agent and for
 * connectors to other platforms. It keeps one connection up (WebSocket, or long-poll),
 * reconnecting with backoff; hands each signal to the consumer once per process, in queue
 * order, however often the server redelivers it; and retries acks until the server settles
 * them. Delivery is at least once: a consumer that may restart must remember what it executed
 * (by signal id) before it acks, as the paper agent does.
 *
 *     const client = new AgentClient({ server, token });
 *     for await (const signal of client.signals()) {
 *       const outcome = await execute(signal.signal);
 *       await client.ack(signal.id, outcome);
 *     }
 */
export class AgentClient {
  private readonly http: AgentHttp;
  private readonly log: AgentLog;
  private readonly inbox = new SignalInbox();
  private readonly stop = new AbortController();
  /** Ends the wait between snapshots early, at a stop: the last one goes at once. */
  private readonly spacingCut = new AbortController();
  private closing: Promise<void> | null = null;
  private link: WebSocketLink | null = null;
  private running: Promise<void> | null = null;
  private current: 'websocket' | 'long-poll' | null = null;
  private helloAgent: HelloMessage['agent'] | null = null;
  private latestState: object | (() => object) | null = null;
  private stateDirty = false;
  private stateChain: Promise<unknown> = Promise.resolve();
  /** When the last snapshot was sent (performance.now()); -Infinity before the first. */
  private stateSentAt = -Infinity;
  private failure: Error | null = null;
  /** The server refused our WebSocket: another connection holds the agent's session. */
  private standingBy = false;
  /** The link whose server refused the `fills` message (older than it): its reports go over HTTP. */
  private fillsOverHttpOn: WebSocketLink | null = null;
  /** Said that the server cannot be reached, since it last answered (said once per outage). */
  private unreachableSaid = false;

  constructor(private readonly options: AgentClientOptions) {
    this.http = new AgentHttp(options.server, options.token);
    this.log = options.log ?? silentLog;
  }

  /** The agent this token belongs to, once a WebSocket connection said so. */
  get agent(): HelloMessage['agent'] | null {
    return this.helloAgent;
  }

  /** The transport in use, or null while disconnected. */
  get transport(): 'websocket' | 'long-poll' | null {
    return this.current;
  }

  /**
   * Asks the server whom the token belongs to, retrying with backoff while the server cannot be
   * reached or fails; throws AgentUnauthorizedError when it refuses the token, AgentSetupError
   * when the certificate is not trusted or what answers is not signalgate, AgentClosedError
   * after `close()`. A consumer calls this before setting anything up for the agent.
   */
  async identify(): Promise<AgentIdentity> {
    const backoff = this.newBackoff();
    while (true) {
      if (this.stop.signal.aborted) throw new AgentClosedError();
      try {
        const agent = await this.http.identify(this.stop.signal);
        this.reachable();
        return agent;
      } catch (err) {
        if (!(err instanceof TransientError)) throw err;
        if (this.stop.signal.aborted) throw new AgentClosedError();
        if (err instanceof ServerUnreachableError) this.unreachable(err.message);
        else
          this.log.warn(
            { server: this.options.server, err: err.message },
            'the server could not check the agent token yet; retrying',
          );
        await sleep(backoff.next(), this.stop.signal);
      }
    }
  }

  /** Starts connecting (also done by `signals()`); reconnects until `close()`. */
  start(): void {
    this.running ??= this.run().catch((err: Error) => this.fail(err));
  }

  /**
   * The agent's signals, oldest first, each once. Ends after `close()`; throws
   * AgentUnauthorizedError when the server refuses the token. One consumer at a time.
   */
  signals(): AsyncIterableIterator<AgentSignal> {
    this.start();
    const inbox = this.inbox;
    return {
      next: () => inbox.next(),
      return: async () => ({ value: undefined, done: true }),
      [Symbol.asyncIterator]() {
        return this;
      },
    };
  }

  /**
   * Acknowledges a signal with its outcome. Retries (WebSocket when up, HTTP otherwise) until
   * the server answers for good: `ok` when recorded (also as a repeat of the same ack), or the
   * refusal (409 ALREADY_ACKNOWLEDGED with another status, 409 SIGNAL_EXPIRED or SIGNAL_NOT_DELIVERED, 404).
   */
  async ack(id: string, outcome: Outcome): Promise<AckAnswer> {
    const body = {
      status: outcome.status,
      message: outcome.message ?? null,
      ...(outcome.result !== undefined && { result: outcome.result }),
      ...(outcome.timings !== undefined && { timings: outcome.timings }),
    };
    const backoff = this.newBackoff();
    try {
      while (true) {
        if (this.failure) throw this.failure;
        if (this.stop.signal.aborted) throw new AgentClosedError();
        try {
          const link = this.link;
          const reply = link?.open
            ? await link.request({ type: 'ack', id, ...body })
            : await this.http.ack(id, body, this.stop.signal);
          return answerOf(reply);
        } catch (err) {
          if (err instanceof AgentUnauthorizedError) this.fail(err);
          if (!(err instanceof TransientError)) throw err;
          this.log.warn({ signalId: id, err: err.message }, 'ack not delivered yet; retrying');
          await sleep(backoff.next(), this.stop.signal);
        }
      }
    } finally {
      this.inbox.release(id);
    }
  }

  /**
   * Asks the server to halt the account (a loss rule reached), once, over HTTP whatever the
   * transport. Throws TransientError or ServerUnreachableError when it could not be asked.
   */
  halt(body: { rule: string; reason: string }): Promise<AgentReply> {
    return this.http.halt(body, this.stop.signal);
  }

  /**
   * Publishes the account snapshot (balance, equity, currency, positions, orders). Latest
   * wins: a snapshot that cannot be sent now is sent on the next connection, and one published
   * within STATE_SPACING_MS of the last sent goes when that interval ends. Resolves true
   * when the server recorded this one. Given a function, the snapshot is made when it is sent:
   * of many published while one send is under way, only the last is ever made.
   */
  publishState(state: object | (() => object)): Promise<boolean> {
    this.latestState = state;
    this.stateDirty = true;
    return this.flushState();
  }

  /**
   * Sends a ledger report: over the WebSocket while it is open, else over HTTP (also when the
   * server is too old to take it over the WebSocket). `recorded`: the server recorded it or knew
   * its entries; `refused`: it never will (the report is malformed), so it is not sent again;
   * `later`: the server was not reached or is too old to have the endpoint.
   */
  async reportFills(report: LedgerReport): Promise<'recorded' | 'refused' | 'later'> {
    if (this.stop.signal.aborted) return 'later';
    try {
      const link = this.link;
      let reply: AgentReply | null = null;
      if (link?.open && this.fillsOverHttpOn !== link) {
        reply = await link.request({ type: 'fills', report });
        if (isUnknownType(reply)) {
          // A server older than the message: HTTP for the rest of this connection, and this report now.
          this.fillsOverHttpOn = link;
          this.log.info({}, 'the server takes ledger reports over HTTP only (an older version); sending them so');
          reply = null;
        }
      }
      reply ??= await this.http.reportFills(report, this.stop.signal);
      if (reply.status === 200) return 'recorded';
      if (reply.status === 404) {
        this.log.warn({}, 'the server keeps no ledger (an older version): fills are kept and sent once it does');
        return 'later';
      }
      this.log.error({ status: reply.status, problem: reply.body }, 'the server refused the ledger report');
      return 'refused';
    } catch (err) {
      if (err instanceof AgentUnauthorizedError) this.fail(err);
      return 'later';
    }
  }

  /** Stops: sends a snapshot still waiting for its interval (within LAST_STATE_MS), closes the connection, ends `signals()`, abandons pending retries. */
  close(): Promise<void> {
    this.closing ??= this.closeOnce();
    return this.closing;
  }

  private async closeOnce(): Promise<void> {
    if (this.stop.signal.aborted) return;
    // The account's last change goes now, not when its interval ends (the stop would drop it):
    // a stopped agent's card shows what it held. Bounded, so a server that does not answer
    // cannot hold the stop up.
    this.spacingCut.abort();
    if (this.current !== null && this.stateDirty) {
      const sent = new AbortController();
      const last = this.flushState()
        .catch(() => false)
        .finally(() => sent.abort());
      await Promise.race([last, sleep(LAST_STATE_MS, sent.signal)]);
    }
    this.stop.abort();
    this.link?.close();
    this.inbox.end();
    await this.running;
    this.http.close();
  }

  private async run(): Promise<void> {
    const mode = this.options.transport ?? 'auto';
    const backoff = this.newBackoff();
    let pollUntil = 0;
    while (!this.stop.signal.aborted) {
      if (mode === 'websocket' || (mode === 'auto' && Date.now() >= pollUntil)) {
        const end = await this.runWebSocket();
        this.disconnected(end.reason);
        if (this.stop.signal.aborted) break;
        if (end.unauthorized) throw new AgentUnauthorizedError();
        if (end.agentConnected) {
          // Long-poll would be refused too, and executing here would double every order: stay a
          // standby that retries, with backoff, until the other session ends.
          this.standBy(end.reason);
          await sleep(backoff.next(), this.stop.signal);
          continue;
        }
        if (end.opened) backoff.reset();
        else if (mode === 'websocket' && end.status === null) this.unreachable(end.reason);
        else if (mode === 'auto' && end.fallback) {
          // While the server is known to be down, every attempt would say this again.
          if (!this.unreachableSaid)
            this.log.warn({ reason: end.reason }, 'WebSocket unavailable; falling back to long-poll');
          pollUntil = Date.now() + (this.options.webSocketRetryMs ?? 60_000);
          continue;
        }
        await sleep(backoff.next(), this.stop.signal);
        continue;
      }
      const error = await this.runLongPoll(() => mode === 'auto' && Date.now() >= pollUntil);
      this.disconnected(error?.message ?? 'trying the WebSocket again');
      // Retrying cannot mend either: the token, or a certificate this process does not trust.
      if (error instanceof AgentUnauthorizedError || error instanceof AgentSetupError) throw error;
      if (error instanceof AgentConnectedError) this.standBy(error.message);
      if (error instanceof ServerUnreachableError) this.unreachable(error.message);
      if (error !== null) {
        pollUntil = 0;
        await sleep(backoff.next(), this.stop.signal);
      } else backoff.reset();
    }
  }

  private async runWebSocket(): Promise<LinkEnd & { fallback: boolean }> {
    const link = new WebSocketLink(this.options.server, this.options.token, {
      onHello: (hello) => {
        this.helloAgent = hello.agent;
        this.connected('websocket');
      },
      onSignals: (signals) => void this.inbox.offer(signals),
    });
    this.link = link;
    if (this.stop.signal.aborted) link.close();
    const end = await link.ended;
    this.link = null;
    this.fillsOverHttpOn = null;
    // Never came up (a proxy without WebSocket support, or the server is down): long-poll
    // may still get through; when it fails too, the next attempt is the WebSocket again.
    return { ...end, fallback: !end.opened && !end.unauthorized && !end.agentConnected };
  }

  /** Polls until an error (answered) or `giveUp()` says to try the WebSocket again (null). */
  private async runLongPoll(giveUp: () => boolean): Promise<Error | null> {
    // The first poll does not wait, so the connection is known (and announced) at once.
    let wait = 0;
    let announced = false;
    while (!this.stop.signal.aborted && !giveUp()) {
      // Everything handed to the consumer is acked first, or the poll would hand it out again.
      await this.inbox.whenIdle();
      if (this.stop.signal.aborted) break;
      let signals: AgentSignal[];
      try {
        signals = await this.http.poll(wait, this.stop.signal);
      } catch (err) {
        return err as Error;
      }
      if (!announced) {
        announced = true;
        wait = this.options.pollWaitSeconds ?? 25;
        this.connected('long-poll');
      }
      const fresh = this.inbox.offer(signals);
      // Only repeats: their acks are still on their way; do not spin on them.
      if (signals.length > 0 && fresh === 0) await sleep(250, this.stop.signal);
    }
    return null;
  }

  private standBy(reason: string): void {
    if (this.standingBy) return;
    this.standingBy = true;
    this.log.warn(
      { reason, server: this.options.server },
      'another process is connected with this agent token; waiting',
    );
    this.options.onStatus?.({ transport: null, reason });
  }

  /** The server did not answer at all: down, or a wrong URL. Said once until it answers again. */
  private unreachable(reason: string): void {
    if (this.unreachableSaid || this.stop.signal.aborted) return;
    this.unreachableSaid = true;
    this.log.warn(
      { server: this.options.server, reason },
      `the server is unreachable at ${this.options.server}; retrying until it answers`,
    );
  }

  private reachable(): void {
    if (this.unreachableSaid) this.log.info({ server: this.options.server }, 'the server answers again');
    this.unreachableSaid = false;
  }

  private connected(transport: 'websocket' | 'long-poll'): void {
    this.reachable();
    this.current = transport;
    if (this.standingBy) this.log.info({ transport }, 'the other connection with this agent token ended; taking over');
    this.standingBy = false;
    this.log.info({ transport, server: this.options.server }, 'connected');
    this.options.onStatus?.({ transport });
    if (this.stateDirty) void this.flushState();
  }

  private disconnected(reason: string): void {
    if (this.current === null) return;
    this.current = null;
    if (!this.stop.signal.aborted) this.log.warn({ reason }, 'disconnected; reconnecting');
    this.options.onStatus?.({ transport: null, reason });
  }

  private flushState(): Promise<boolean> {
    const sent = this.stateChain.then(async () => {
      // A snapshot made meanwhile replaces this one: whichever is latest goes when the interval ends.
      const wait = this.stateSentAt + STATE_SPACING_MS - performance.now();
      if (wait > 0 && this.stateDirty) await sleep(wait, this.spacingCut.signal);
      return this.sendLatestState();
    });
    this.stateChain = sent;
    return sent;
  }

  private async sendLatestState(): Promise<boolean> {
    // A standby's account is not the agent's: the connected process publishes that one.
    if (!this.stateDirty || this.latestState === null || this.stop.signal.aborted || this.standingBy) return false;
    const state = this.latestState;
    this.stateDirty = false;
    this.stateSentAt = performance.now();
    try {
      const snapshot = typeof state === 'function' ? state() : state;
      const link = this.link;
      const reply = link?.open
        ? await link.request({ type: 'state', state: snapshot as Record<string, unknown> })
        : await this.http.putState(snapshot, this.stop.signal);
      if (reply.status === 200) return true;
      if (isAgentConnected(reply)) {
        // Sent over HTTP while our own WebSocket was being set up, or while another process holds
        // the session: kept for our next connection.
        if (this.latestState === state) this.stateDirty = true;
        return false;
      }
      this.log.error({ status: reply.status, problem: reply.body }, 'the server refused the state snapshot');
      return false;
    } catch (err) {
      if (err instanceof AgentUnauthorizedError) this.fail(err);
      // Kept for the next connection unless a newer snapshot replaced it meanwhile.
      if (this.latestState === state) this.stateDirty = true;
      return false;
    }
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.log.error({ err: err.message }, 'agent client stopped');
    this.stop.abort();
    this.spacingCut.abort();
    this.link?.close();
    this.inbox.end(err);
    this.http.close();
  }

  private newBackoff(): Backoff {
    return new Backoff(this.options.backoff?.initialMs, this.options.backoff?.maxMs);
  }
}

function answerOf(reply: AgentReply): AckAnswer {
  if (reply.status === 200) return { ok: true, delivery: reply.body as Delivery };
  return { ok: false, status: reply.status, problem: reply.body as ProblemBody };
}
