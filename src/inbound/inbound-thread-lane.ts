import { Worker } from 'node:worker_threads';
import type { InboundAnswer } from './inbound-answer.js';
import type { InboundLane } from './inbound-lane.js';
import type { InboundRequest } from './inbound-request.js';
import { OutcomeUnknownError } from '../store/outcome-unknown.js';
import { StoreUnavailableError } from '../store/store-unavailable.js';
import type { FromInboundThread, InboundThreadData, ToInboundThread } from './inbound-thread-protocol.js';

/**
 * Requests go to the thread in one message per event-loop turn, or sooner once this many are
 * waiting: in a busy turn the thread starts on the first ones instead of idling until the turn
 * ends (measured: about a tenth more throughput at 50 connections than one message per turn).
 */
const SEND_EVERY = 8;

interface Pending {
  resolve: (answer: InboundAnswer) => void;
  reject: (error: Error) => void;
}

export interface InboundThreadEvents {
  /** Agents with new deliveries that the thread committed (not yet synced: a hand-out syncs for itself). */
  onDeliveries: (agentIds: string[]) => void;
  /** The thread stopped unasked: every request from now on fails. */
  onFailure: (error: Error) => void;
}

/**
 * Hands inbound requests to the inbound thread (`inbound-thread-main.ts`) and settles each with its
 * answer. If the thread dies, what it was given fails with `OutcomeUnknownError` (it may have
 * committed some of it; the HTTP edge closes those connections unanswered), and what it was not
 * given, and everything after, fails plainly (500): nothing is answered that was not committed,
 * and nothing is refused that may have been.
 */
export class InboundThreadLane implements InboundLane {
  private readonly pending = new Map<number, Pending>();
  private outgoing: Array<{ n: number; request: InboundRequest }> = [];
  private sending: NodeJS.Immediate | null = null;
  private next = 0;
  private failed: Error | null = null;
  private closing: Promise<void> | null = null;

  private constructor(
    private readonly worker: Worker,
    private readonly events: InboundThreadEvents,
  ) {
    worker.on('message', (message: FromInboundThread) => this.received(message));
    worker.on('error', (error) => this.fail(error));
    worker.on('exit', (code) => this.fail(new Error(`the inbound thread exited with code ${code}`)));
  }

  /** Starts the thread and waits until its store is open. */
  static async start(data: InboundThreadData, events: InboundThreadEvents): Promise<InboundThreadLane> {
    const worker = new Worker(threadEntry(), { workerData: data });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (message: FromInboundThread) => {
        if (message.kind !== 'ready') return;
        worker.off('message', onMessage);
        worker.off('error', reject);
        resolve();
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
    });
    return new InboundThreadLane(worker, events);
  }

  get failure(): Error | null {
    return this.failed;
  }

  receive(request: InboundRequest): Promise<InboundAnswer> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closing) return Promise.reject(new Error('the inbound lane is closed'));
    const n = this.next++;
    // A message copies a view's whole backing buffer: a body that shares one (a pooled
    // allocation) is copied out first. A body read in one chunk has a buffer of its own.
    const body =
      request.body.byteLength === request.body.buffer.byteLength ? request.body : new Uint8Array(request.body);
    return new Promise<InboundAnswer>((resolve, reject) => {
      this.pending.set(n, { resolve, reject });
      this.outgoing.push({ n, request: { ...request, body } });
      if (this.outgoing.length >= SEND_EVERY) this.send();
      else this.sending ??= setImmediate(() => this.send());
    });
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.send();
      if (this.failed) return;
      const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
      this.post({ kind: 'close' });
      await exited;
    })();
    return this.closing;
  }

  private send(): void {
    if (this.sending) clearImmediate(this.sending);
    this.sending = null;
    if (this.outgoing.length === 0) return;
    const items = this.outgoing;
    this.outgoing = [];
    this.post({ kind: 'requests', items });
  }

  private post(message: ToInboundThread): void {
    this.worker.postMessage(message);
  }

  private received(message: FromInboundThread): void {
    if (message.kind !== 'answers') return;
    if (message.agentIds.length > 0) this.events.onDeliveries(message.agentIds);
    for (const item of message.items) {
      const pending = this.pending.get(item.n);
      if (!pending) continue;
      this.pending.delete(item.n);
      if ('answer' in item) pending.resolve(item.answer);
      else if (item.outcomeUnknown) pending.reject(new OutcomeUnknownError(new Error(item.error)));
      else if (item.unavailable) pending.reject(new StoreUnavailableError(item.error));
      else pending.reject(new Error(item.error));
    }
  }

  private fail(error: Error): void {
    if (this.failed) return;
    this.failed = error;
    // What the thread was given may have been committed before it died; the rest never reached it.
    const unsent = new Set(this.outgoing.map((item) => item.n));
    const unknown = new OutcomeUnknownError(error);
    for (const [n, pending] of this.pending) pending.reject(unsent.has(n) ? error : unknown);
    this.pending.clear();
    this.outgoing = [];
    if (!this.closing) this.events.onFailure(error);
  }
}

/**
 * The thread's entry file. Built, it sits beside this one. Run from the TypeScript sources (the
 * test runner transforms them, but a worker thread does not get that transform), the built
 * copy in `dist/` is used; `npm test` builds before it runs.
 */
function threadEntry(): URL {
  const here = new URL(import.meta.url);
  if (!here.pathname.endsWith('.ts')) return new URL('./inbound-thread-main.js', here);
  return new URL('../../dist/inbound/inbound-thread-main.js', here);
}
