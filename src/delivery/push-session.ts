import type { Logger } from 'pino';
import type { DeliveryAlerts } from './delivery-alerts.js';
import { unknownNames } from '../errors/unknown-names.js';
import { repeatedJsonKey, repeatedKeyDetail } from '../http-kit/repeated-json-key.js';
import { jsonBodyProblem, MAX_JSON_BODY_BYTES } from '../http-kit/json-body-limits.js';
import { type RawData, WebSocket } from 'ws';
import type { AgentIdentity } from '../store/records.js';
import type { AgentSessionClaim, Store } from '../store/store.js';
import { acknowledgeSignal } from './acknowledge-signal.js';
import { type AgentAnswer, failure } from './agent-answer.js';
import type { AgentPresence } from './agent-presence.js';
import { DELIVERY_BATCH } from './delivery-batch.js';
import type { DeliveryBoard } from './delivery-board.js';
import {
  CLOSE_INTERNAL_ERROR,
  CLOSE_TOKEN_REVOKED,
  CLOSE_TOO_MANY_MESSAGES,
  type ResultMessage,
  type ServerMessage,
  TOKEN_REVOKED_REASON,
  TOO_MANY_MESSAGES_REASON,
} from '../protocol/push-protocol.js';
import { saveAgentState } from './save-agent-state.js';
import { recordFills } from './record-fills.js';
import type { CoalescedWrites } from '../protocol/coalesced-writes.js';
import { ErrorCode } from '../errors/catalog.js';
import { STORE_UNAVAILABLE } from '../http-kit/server-problems.js';
import { isStoreUnavailable } from '../store/store-unavailable.js';

/** Past this many acks waiting for the disk, the connection's next message waits for them. */
const MAX_ACKS_IN_FLIGHT = 2 * DELIVERY_BATCH;

/**
 * The most messages one connection may have received and not yet had taken: four windows' worth
 * of acks. An agent waits for each window's results before it gets more signals, so only a
 * client that keeps sending without reading its answers gets here; past it the connection is
 * closed (`CLOSE_TOO_MANY_MESSAGES`), rather than its messages piling up in the server's memory.
 */
export const MAX_WAITING_MESSAGES = 4 * DELIVERY_BATCH;

export interface PushDependencies {
  store: Store;
  board: DeliveryBoard;
  presence: AgentPresence;
  logger: Logger;
  /** The notifications' view of acknowledgements and agent states, when notifications run. */
  alerts?: DeliveryAlerts | null;
}

/**
 * One agent's WebSocket connection: pushes its pending deliveries on connect and new ones as
 * they are committed, and answers its acks, state updates and ledger reports in the order they came. A signal
 * is pushed once per connection; if the connection drops before the ack, the next connection
 * (or poll) gets it again.
 */
export class PushSession {
  private pumping = false;
  private pumpAgain = false;
  /** The last take was a full batch: an ack may let further signals through. */
  private windowFull = false;
  /** Acknowledgements received and not yet on disk. */
  private acksInFlight = 0;
  /** The answer last queued: each waits for the one before it. */
  private answering: Promise<void> = Promise.resolve();
  private unwatch: () => void = () => {};
  /** Messages are taken one at a time, in the order they came (an ack's write may still be waiting for the disk); answers keep that order, so results need no `ref` to match. */
  private receiving: Promise<void> = Promise.resolve();
  /** Messages received and not yet taken. */
  private waiting = 0;
  /** Closed for sending too much: what is still waiting is dropped, unanswered and unrecorded. */
  private overrun = false;

  constructor(
    private readonly ws: WebSocket,
    private readonly agent: AgentIdentity,
    private readonly claim: AgentSessionClaim,
    private readonly deps: PushDependencies,
    /** The connection's socket, its messages of one turn written together. */
    private readonly writes: CoalescedWrites,
  ) {}

  start(): void {
    const { ws, agent, deps } = this;
    void deps.presence.seen(agent.id);
    this.send({
      type: 'hello',
      agent: { id: agent.id, name: agent.name, accountId: agent.accountId },
      window: DELIVERY_BATCH,
    });
    this.unwatch = deps.board.watch(agent.id, (reason) => {
      if (reason === 'queued' || (reason === 'acked' && this.windowFull)) void this.pump();
    });
    ws.on('message', (data, isBinary) => {
      if (this.overrun) return;
      if (++this.waiting > MAX_WAITING_MESSAGES) return this.closeOverrun();
      this.receiving = this.receiving
        .then(() => (this.overrun ? undefined : this.receive(data, isBinary)))
        .catch((err: unknown) => deps.logger.error({ err, agentId: agent.id }, 'agent message failed'))
        .finally(() => this.waiting--);
    });
    ws.on('pong', () => {
      void deps.presence.seen(agent.id);
      // Also every ping: a rotation by a process that could not wake this one (the CLI on the
      // embedded store) closes the connection within a heartbeat.
      void this.closeIfRevoked().catch((err: unknown) =>
        deps.logger.warn({ err, agentId: agent.id }, 'could not check the agent token'),
      );
    });
    ws.on('close', () => this.unwatch());
    void this.pump();
  }

  /** Hands out what is pending and not yet pushed here; runs one at a time, again if woken meanwhile. */
  private async pump(): Promise<void> {
    if (this.pumping) {
      this.pumpAgain = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.pumpAgain = false;
        if (this.ws.readyState !== WebSocket.OPEN) return;
        // Only what this connection has not had yet comes back, so a full window costs a read.
        // Rotating the token or deleting the agent wakes this pump, and the hand-out itself checks
        // the token (no round trip of its own before it): nothing more goes out on the old token.
        const handOut = await this.claim.takeDeliveries(new Date().toISOString(), DELIVERY_BATCH);
        if (handOut.revoked) {
          this.closeRevoked();
          return;
        }
        this.windowFull = handOut.full;
        if (handOut.signals.length > 0 && this.ws.readyState === WebSocket.OPEN) {
          this.send({ type: 'signals', signals: handOut.signals });
        }
      } while (this.pumpAgain);
    } catch (err) {
      this.deps.logger.error({ err, agentId: this.agent.id }, 'could not hand out deliveries; closing the connection');
      this.ws.close(CLOSE_INTERNAL_ERROR, 'store failure; reconnect');
    } finally {
      this.pumping = false;
    }
  }

  /** Closes the connection (4401) when the agent's token is no longer the one it connected with. */
  private async closeIfRevoked(): Promise<void> {
    // By the token's digest, as every agent request is looked up: the store answers those of a
    // turn together (PostgreSQL), where a read by id would be a query of its own per wake-up.
    const current = await this.deps.store.agents.findByTokenHash(this.agent.tokenHash);
    if (current === null || current.id !== this.agent.id) this.closeRevoked();
  }

  private closeOverrun(): void {
    this.overrun = true;
    this.deps.logger.warn(
      { agentId: this.agent.id, waiting: this.waiting, limit: MAX_WAITING_MESSAGES },
      'closing the agent connection: it sent more messages than it waited for answers to; those not yet taken are dropped',
    );
    this.ws.close(CLOSE_TOO_MANY_MESSAGES, TOO_MANY_MESSAGES_REASON);
  }

  private closeRevoked(): void {
    this.deps.logger.info(
      { agentId: this.agent.id },
      'closing the agent connection: its token was rotated or the agent deleted',
    );
    this.ws.close(CLOSE_TOKEN_REVOKED, TOKEN_REVOKED_REASON);
  }

  private async receive(data: RawData, isBinary: boolean): Promise<void> {
    const { deps, agent } = this;
    void deps.presence.seen(agent.id);
    const bytes = byteLength(data);
    // Bounded before it is parsed, as the HTTP bodies are: nested thousands deep, a message parses
    // but overflows the stack wherever it is walked later (on its way to the store).
    // Not decoded at all when too large (ws refuses such frames already: maxPayload).
    const text = isBinary || bytes > MAX_JSON_BODY_BYTES ? '' : data.toString();
    const tooBig = jsonBodyProblem(text, bytes, 'message');
    if (tooBig !== null) {
      this.reply(null, failure(tooBig));
      return;
    }
    let message: unknown;
    try {
      message = isBinary ? undefined : JSON.parse(text);
    } catch {
      message = undefined;
    }
    if (message === null || typeof message !== 'object' || Array.isArray(message)) {
      this.reply(
        null,
        failure({ code: ErrorCode.INVALID_REQUEST, detail: 'each message must be one JSON object with a "type"' }),
      );
      return;
    }
    const { type, ref: rawRef, ...fields } = message as Record<string, unknown>;
    const ref = typeof rawRef === 'string' || typeof rawRef === 'number' ? rawRef : null;
    // As the HTTP bodies are: a field given twice would count as whichever came last.
    const repeated = repeatedJsonKey(text, type === 'fills' ? 'report' : 'state', message);
    if (repeated !== null) {
      this.reply(
        ref,
        failure({ code: ErrorCode.INVALID_REQUEST, param: repeated, detail: repeatedKeyDetail(repeated) }),
      );
      return;
    }
    try {
      if (type === 'ack') {
        const { id, ...ack } = fields;
        if (typeof id !== 'string' || id === '') {
          this.reply(
            ref,
            failure({ code: ErrorCode.INVALID_FIELD, param: 'id', detail: "'id' must name the signal acknowledged" }),
          );
          return;
        }
        // Not waited for (up to a bound): the acks that arrive together then share one commit and
        // one sync of the store, instead of each waiting for the disk in turn, which held an agent
        // acknowledging 300 signals a second seconds behind. Its answer still goes out in turn.
        const answer = this.acknowledge(id, ack);
        this.reply(ref, answer);
        if (this.acksInFlight > MAX_ACKS_IN_FLIGHT) await answer;
      } else if (type === 'state') {
        const unknown = unknownNames(Object.keys(message), ['type', 'ref', 'state'], 'field');
        if (unknown.length > 0) {
          this.reply(ref, failure(...unknown));
          return;
        }
        const now = Date.now();
        await deps.alerts?.stateReported(agent.id, fields.state);
        const answer = await saveAgentState(deps.store, agent.id, fields.state, now);
        if (answer.ok) deps.presence.recorded(agent.id, now);
        this.reply(ref, answer);
      } else if (type === 'fills') {
        // Not waited for, as an ack is not: the acks behind a report share its commit instead of
        // waiting for it. An agent sends its next report once this one is answered: one at a time.
        this.reply(
          ref,
          this.recordFills(message as Record<string, unknown>).catch((err: unknown) => this.failureOf(err)),
        );
      } else {
        this.reply(
          ref,
          failure({
            code: ErrorCode.INVALID_REQUEST,
            param: 'type',
            detail: '\'type\' must be "ack", "state" or "fills"',
          }),
        );
      }
    } catch (err) {
      this.reply(ref, this.failureOf(err));
    }
  }

  /**
   * A ledger report, checked and recorded as `POST /api/agent/fills` does. Not held to the
   * session, as that endpoint is not: fills are facts of the venue (and this session is the
   * agent's own anyway).
   */
  private recordFills(message: Record<string, unknown>): Promise<AgentAnswer> {
    const unknown = unknownNames(Object.keys(message), ['type', 'ref', 'report'], 'field');
    if (unknown.length > 0) return Promise.resolve(failure(...unknown));
    const report = message.report;
    if (report === null || typeof report !== 'object' || Array.isArray(report)) {
      return Promise.resolve(
        failure({
          code: ErrorCode.INVALID_FIELD,
          param: 'report',
          detail:
            "'report' must be the ledger report, the body of POST /api/agent/fills: {fills: [...], funding: [...]}",
        }),
      );
    }
    return recordFills(this.deps.store, this.agent, report, Date.now());
  }

  /** Never rejects: a failure becomes the answer. */
  private async acknowledge(id: string, ack: Record<string, unknown>): Promise<AgentAnswer> {
    this.acksInFlight++;
    try {
      const answer = await acknowledgeSignal(
        this.deps.store,
        this.deps.logger,
        this.agent.id,
        id,
        ack,
        Date.now(),
        this.deps.alerts,
      );
      if (answer.ok) this.deps.board.wake(this.agent.id, 'acked');
      return answer;
    } catch (err) {
      return this.failureOf(err);
    } finally {
      this.acksInFlight--;
    }
  }

  private failureOf(err: unknown): AgentAnswer {
    this.deps.logger.error({ err, agentId: this.agent.id }, 'agent message failed');
    return failure(
      isStoreUnavailable(err)
        ? STORE_UNAVAILABLE
        : {
            code: ErrorCode.INTERNAL_ERROR,
            detail: 'the server failed to handle this message; nothing was recorded, so it is safe to retry',
          },
    );
  }

  /** Answers go out in the order their messages came, an ack's once it is on disk. */
  private reply(ref: string | number | null, answer: AgentAnswer | Promise<AgentAnswer>): void {
    this.answering = this.answering.then(async () => {
      const settled = await answer;
      const message: ResultMessage = { type: 'result', ref, status: settled.status, body: settled.body };
      this.send(message);
    });
  }

  private send(message: ServerMessage): void {
    if (this.ws.readyState !== WebSocket.OPEN) return;
    this.writes.hold();
    this.ws.send(JSON.stringify(message));
  }
}

function byteLength(data: RawData): number {
  if (Array.isArray(data)) return data.reduce((sum, chunk) => sum + chunk.length, 0);
  return data instanceof ArrayBuffer ? data.byteLength : data.length;
}
