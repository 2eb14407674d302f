/**
 * An agent's work queue: one lane per symbol, whose items run one after another in the order
 * they were queued, lanes of different symbols side by side (at most `concurrency` items at
 * once), and account-wide items (the venue's reports, reconciliation, the protection pass) that
 * wait for every item queued before them and hold every lane while they run. Nothing queued
 * after an account-wide item starts before it has finished, so the order of the queue is the
 * order in which anything that spans symbols sees the book.
 */
export class WorkLanes {
  private readonly waiting: Item[] = [];
  private readonly runningKeys = new Set<string>();
  private running = 0;
  private wholeRunning = false;
  private idleWaiters: Array<() => void> = [];

  constructor(private readonly concurrency: number) {
    if (!Number.isInteger(concurrency) || concurrency < 1)
      throw new RangeError(`concurrency must be a whole number >= 1, got ${concurrency}`);
  }

  /** Queues `work` on the lane `key`: it runs after every item queued before it on that lane or account-wide. */
  lane<T>(key: string, work: () => Promise<T>): Promise<T> {
    return this.queue(key, work);
  }

  /** Queues account-wide `work`: it runs alone, once every item queued before it has finished. */
  whole<T>(work: () => Promise<T>): Promise<T> {
    return this.queue(null, work);
  }

  /** Items queued or running. */
  get size(): number {
    return this.waiting.length + this.running;
  }

  /** Resolves once nothing is queued or running (at once when so now). */
  whenIdle(): Promise<void> {
    if (this.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private queue<T>(key: string | null, work: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.waiting.push({
        key,
        run: async () => {
          try {
            resolve(await work());
          } catch (error) {
            reject(error as Error);
          }
        },
      });
      this.pump();
    });
  }

  /** Starts every waiting item whose turn it is, in queue order. */
  private pump(): void {
    if (this.wholeRunning) return;
    // A lane whose earlier item still waits keeps its later ones waiting too.
    const held = new Set<string>();
    for (let i = 0; i < this.waiting.length; i += 1) {
      const item = this.waiting[i]!;
      if (item.key === null) {
        // Account-wide: only first in the queue with nothing running; nothing behind it passes.
        if (i === 0 && this.running === 0) {
          this.waiting.shift();
          this.wholeRunning = true;
          this.start(item);
        }
        return;
      }
      if (this.running >= this.concurrency) return;
      if (held.has(item.key) || this.runningKeys.has(item.key)) {
        held.add(item.key);
        continue;
      }
      this.waiting.splice(i, 1);
      i -= 1;
      this.runningKeys.add(item.key);
      this.start(item);
    }
  }

  private start(item: Item): void {
    this.running += 1;
    void item.run().finally(() => {
      this.running -= 1;
      if (item.key === null) this.wholeRunning = false;
      else this.runningKeys.delete(item.key);
      this.pump();
      if (this.size === 0) {
        const waiters = this.idleWaiters;
        this.idleWaiters = [];
        for (const wake of waiters) wake();
      }
    });
  }
}

interface Item {
  /** The lane; null: account-wide. */
  key: string | null;
  run: () => Promise<void>;
}
