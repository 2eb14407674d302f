/** What one item of a batch came to: its value, or the error that rolled back its savepoint. */
export type ItemResult<O> = { ok: true; value: O } | { ok: false; error: unknown };

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: items submitted during one event-loop turn are handed to `commitBatch`
 * together on the next `setImmediate`, so one transaction (and one fsync) serves them all.
 * `commitBatch` answers one result per item after its COMMIT returned; if it throws, the
 * transaction did not commit and every item of the batch fails with that error.
 */
export class GroupCommit<I, O> {
  private queue: Waiting<I, O>[] = [];
  private scheduled: NodeJS.Immediate | null = null;

  constructor(private readonly commitBatch: (items: I[]) => ItemResult<O>[]) {}

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.scheduled ??= setImmediate(() => this.flush());
    });
  }

  /** Commits whatever is queued now (also called by `close`, so nothing queued is dropped). */
  flush(): void {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = null;
    }
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    let results: ItemResult<O>[];
    try {
      results = this.commitBatch(batch.map((waiting) => waiting.item));
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
      return;
    }
    batch.forEach((waiting, i) => {
      const result = results[i];
      if (result === undefined) waiting.reject(new Error('group commit lost an item'));
      else if (result.ok) waiting.resolve(result.value);
      else waiting.reject(result.error);
    });
  }

  get pending(): number {
    return this.queue.length;
  }
}
