import type { AgentSignal } from '../protocol/agent-signal.js';

/** How many signal ids are remembered to drop redeliveries of signals already handed over. */
const REMEMBERED_IDS = 10_000;

/**
 * Signals received and not yet taken by the consumer, in arrival order, each handed over once
 * per process however often the server delivers it (at-least-once delivery, deduplicated by
 * id). Tracks what the consumer holds without an ack, so the long-poll transport can wait for
 * it before asking again.
 */
export class SignalInbox {
  private readonly queue: AgentSignal[] = [];
  private readonly seen = new Set<string>();
  private readonly held = new Set<string>();
  private takers: Array<(result: IteratorResult<AgentSignal>) => void> = [];
  private failTakers: Array<(err: Error) => void> = [];
  private idleWaiters: Array<() => void> = [];
  private failure: Error | null = null;
  private ended = false;

  /** Queues the signals not seen before; answers how many were new. None once ended (see `end`). */
  offer(signals: readonly AgentSignal[]): number {
    if (this.ended) return 0;
    let fresh = 0;
    for (const signal of signals) {
      if (this.seen.has(signal.id)) continue;
      this.remember(signal.id);
      fresh += 1;
      const taker = this.takers.shift();
      this.failTakers.shift();
      if (taker) {
        this.held.add(signal.id);
        taker({ value: signal, done: false });
      } else {
        this.queue.push(signal);
      }
    }
    return fresh;
  }

  next(): Promise<IteratorResult<AgentSignal>> {
    const signal = this.queue.shift();
    if (signal) {
      this.held.add(signal.id);
      return Promise.resolve({ value: signal, done: false });
    }
    if (this.failure) return Promise.reject(this.failure);
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    this.notifyIdle();
    return new Promise((resolve, reject) => {
      this.takers.push(resolve);
      this.failTakers.push(reject);
    });
  }

  /** The consumer acknowledged the signal (or gave it up): it no longer holds it. */
  release(id: string): void {
    this.held.delete(id);
    this.notifyIdle();
  }

  /** Nothing queued and nothing held by the consumer. */
  get idle(): boolean {
    return this.queue.length === 0 && this.held.size === 0;
  }

  /** Resolves once idle (at once when idle now). */
  whenIdle(): Promise<void> {
    if (this.idle || this.ended) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * No more signals: waiting consumers finish (or fail with `error`). Queued ones are dropped:
   * unacknowledged, the server hands them out again on the next connection.
   */
  end(error?: Error): void {
    if (this.ended) return;
    this.ended = true;
    this.queue.length = 0;
    if (error) this.failure = error;
    const takers = this.takers;
    const failTakers = this.failTakers;
    this.takers = [];
    this.failTakers = [];
    if (error) for (const fail of failTakers) fail(error);
    else for (const take of takers) take({ value: undefined, done: true });
    this.notifyIdle(true);
  }

  private notifyIdle(force = false): void {
    if (!force && !this.idle) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const wake of waiters) wake();
  }

  private remember(id: string): void {
    this.seen.add(id);
    if (this.seen.size > REMEMBERED_IDS) {
      const oldest = this.seen.values().next().value;
      if (oldest !== undefined) this.seen.delete(oldest);
    }
  }
}
