/**
 * What the benchmark's agents report, and the order they work in, whatever the transport: like
 * `AgentClient`'s consumer (`for await (signal of client.signals()) await client.ack(...)`), an
 * agent takes one signal, acknowledges it, and takes the next only once the server answered the
 * ack; a signal is "held" when the agent takes it, so a signal that came in a batch waits for
 * the acks before it, as it would with the client library.
 */
export interface BenchAgentEvents {
  /** The agent took `id` (first time only; a redelivery is dropped by id), which came by `carrier`. */
  held(id: string, carrier: Carrier): void;
  /** The server answered an ack: 200, or another status (a failure). */
  acked(ok: boolean): void;
  /** The agent is connected on its transport (the WebSocket's hello, or the first poll's answer). */
  ready(): void;
}

/**
 * The message that brought a signal: when the agent asked for it (the poll was written; null for
 * a push, which nobody asks for) and when it arrived. Splits a hand-off into the server's part
 * (up to `receivedAt`) and the agent's (behind the acks of the signals before it).
 */
export interface Carrier {
  askedAt: number | null;
  receivedAt: number;
}

/** The ack body every benchmark agent sends: executed at once. */
export const EXECUTED = { status: 'executed', message: null } as const;

/** Signals received and not yet taken, each id once, taken in order. */
export class SignalQueue {
  private readonly seen = new Set<string>();
  private readonly queue: Array<{ id: string; carrier: Carrier }> = [];

  /** Queues the ids not seen before; answers how many were new. */
  offer(ids: readonly string[], carrier: Carrier): number {
    let fresh = 0;
    for (const id of ids) {
      if (this.seen.has(id)) continue;
      this.seen.add(id);
      this.queue.push({ id, carrier });
      fresh++;
    }
    return fresh;
  }

  /** Every signal queued, in order; the queue is empty after. */
  takeAll(): Array<{ id: string; carrier: Carrier }> {
    return this.queue.splice(0);
  }
}
