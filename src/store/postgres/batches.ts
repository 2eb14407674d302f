import type { ItemResult } from '../item-result.js';

export interface BatchesOptions<I> {
  /** At most this many items go to the database in one batch. */
  maxBatch: number;
  /** At most this many batches are in flight at once. */
  maxInFlight: number;
  /**
   * Items with the same key never travel in two batches in flight at once: such a batch
   * would only wait at the database for the first one's locks (the key is the account, whose
   * usage row every accepted signal charges), so the items wait here instead and leave
   * together in the next batch. Items whose key is null (or without `keyOf`) are never held back.
   */
  keyOf?: (item: I) => string | null;
}

interface Waiting<I, O> {
  item: I;
  key: string | null;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Asynchronous group commit: items submitted during one event-loop turn are handed to `run`
 * together on the next `setImmediate`, so one database call serves them all. Several batches
 * may be in flight, but never two holding items with the same key; items that cannot leave
 * yet queue, in order, and leave as one batch when they can, so batches grow with the load
 * instead of the number of calls. `run` answers one result per item, in item order; if it
 * throws, every item of the batch fails with that error.
 */
export class Batches<I, O> {
  private queue: Waiting<I, O>[] = [];
  private scheduled: NodeJS.Immediate | null = null;
  private readonly busyKeys = new Set<string>();
  private inFlight = 0;
  private idle: (() => void)[] = [];

  constructor(
    private readonly run: (items: I[]) => Promise<ItemResult<O>[]>,
    private readonly options: BatchesOptions<I>,
  ) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, key: this.options.keyOf?.(item) ?? null, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once nothing is queued or in flight (what `close` waits for). */
  drained(): Promise<void> {
    if (this.queue.length === 0 && this.inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled === null && this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      this.scheduled = setImmediate(() => {
        this.scheduled = null;
        this.flush();
      });
    }
  }

  private flush(): void {
    while (this.queue.length > 0 && this.inFlight < this.options.maxInFlight) {
      const batch: Waiting<I, O>[] = [];
      const rest: Waiting<I, O>[] = [];
      for (const waiting of this.queue) {
        if (batch.length < this.options.maxBatch && (waiting.key === null || !this.busyKeys.has(waiting.key))) {
          batch.push(waiting);
        } else {
          rest.push(waiting);
        }
      }
      if (batch.length === 0) return;
      this.queue = rest;
      const keys = new Set<string>();
      for (const waiting of batch) if (waiting.key !== null) keys.add(waiting.key);
      for (const key of keys) this.busyKeys.add(key);
      this.inFlight++;
      void this.send(batch, keys);
    }
  }

  private async send(batch: Waiting<I, O>[], keys: Set<string>): Promise<void> {
    try {
      const results = await this.run(batch.map((waiting) => waiting.item));
      batch.forEach((waiting, i) => {
        const result = results[i];
        if (result === undefined) waiting.reject(new Error('batch lost an item'));
        else if (result.ok) waiting.resolve(result.value);
        else waiting.reject(result.error);
      });
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    } finally {
      for (const key of keys) this.busyKeys.delete(key);
      this.inFlight--;
      this.schedule();
      if (this.queue.length === 0 && this.inFlight === 0) for (const resolve of this.idle.splice(0)) resolve();
    }
  }
}
