import type { ItemResult } from '../item-result.js';
import { OutcomeUnknownError } from '../outcome-unknown.js';
import { StoreUnavailableError } from '../store-unavailable.js';

/** How often, at most, a failed group commit tries to recover. */
export const RECOVER_EVERY_MS = 1000;

interface Waiting<I, O> {
  item: I;
  resolve: (value: O) => void;
  reject: (error: unknown) => void;
}

/**
 * When `commitBatch` found the write lock held by another connection (`isBusy`), the batch is
 * tried again on a later turn, for up to `retryForMs`, instead of the connection's busy handler
 * sleeping on the thread: that handler sleeps 1, 2, 5 … up to 100 ms at a time whatever the
 * holder does, and on the event loop every sleep stops all serving.
 */
export interface BusyRetry {
  isBusy: (error: unknown) => boolean;
  retryForMs: number;
}

/** A retry's first tries come on the next turn; later ones this many ms apart. */
const RETRY_SOON = 3;
const RETRY_EVERY_MS = 1;

/**
 * Group commit in two steps. Items submitted during one event-loop turn are handed to
 * `commitBatch` together on the next `setImmediate`: one transaction, whose COMMIT does not wait
 * for the disk. `makeDurable` then waits for the disk off the event loop, and only when it
 * resolved are the batch's items settled. Items arriving meanwhile form the next batch, which
 * commits only after the previous one is durable; so whatever an item's transaction read from
 * earlier batches was on disk before that item is answered.
 *
 * If `commitBatch` throws, the transaction did not commit and every item of the batch fails with
 * that error. If `makeDurable` fails (a full disk at fdatasync, an I/O error), committed data may
 * not be on disk: the batch's items fail with `OutcomeUnknownError` (committed, so not refused
 * either), and everything after them with `StoreUnavailableError` (never committed: a retry is
 * safe), until `recover` succeeds: it must make everything committed so far durable by another
 * way (a checkpoint into the database file, synced), since the kernel may have dropped what the
 * failed sync was to write. It is tried at most once a second, when an item arrives. Without
 * `recover`, the failure is for good. Nothing written is ever answered as stored unsynced.
 *
 * With `overlapSyncs`, the next batch commits while the previous one's sync is still under way,
 * and is settled only after that one and its own: a sync covers everything written to the log
 * before it, so what the batch read is on disk when it is answered, and a writer that waits for
 * each answer (an agent acknowledging signal after signal) waits for one sync instead of two.
 */
export class GroupCommit<I, O> {
  private queue: Waiting<I, O>[] = [];
  private scheduled: { cancel: () => void } | null = null;
  /** Since when the batch at the head has found the write lock held, and how often. */
  private busySince: { at: number; tries: number } | null = null;
  /** Settles once the last committed batch is durable and its items are settled. */
  private syncing: Promise<void> | null = null;
  private failure: { error: StoreUnavailableError; triedAt: number } | null = null;
  /** A commit is queued as a promise job (`submit` with `soon`). */
  private soonQueued = false;

  constructor(
    private readonly commitBatch: (items: I[]) => ItemResult<O>[],
    private readonly makeDurable: () => Promise<void>,
    private readonly options: { recover?: () => void; busy?: BusyRetry; overlapSyncs?: boolean } = {},
  ) {}

  /**
   * With `soon`, the queue commits once the current callback's promise jobs have run, not at the
   * turn's end: writes woken together by one event (the hand-outs of one notification) still
   * share a transaction, and do not wait for the rest of a busy turn.
   */
  submit(item: I, soon = false): Promise<O> {
    if (this.failure && !this.recovered()) return Promise.reject(this.failure.error);
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      if (soon) this.commitSoon();
      else this.schedule();
    });
  }

  /**
   * Resolves once every batch committed before the call is durable and its items settled; rejects
   * while the group is failed. Later batches may have committed by then (with `overlapSyncs`, while
   * the one before syncs), so a reader reads first and then waits here, never the other way round
   * (`durable-reads.ts`): it then shows no commit that a power cut could still take back.
   */
  whenDurable(): Promise<void> {
    if (this.failure) return Promise.reject(this.failure.error);
    if (this.syncing === null) return Promise.resolve();
    return this.syncing.then(() => {
      if (this.failure) throw this.failure.error;
    });
  }

  /** Commits whatever is queued and waits until all of it is durable (for closing). */
  async drain(): Promise<void> {
    while (this.syncing !== null || this.queue.length > 0) {
      if (this.syncing !== null) await this.syncing;
      else {
        this.commitQueued();
        // The write lock was held: the batch waits for its retry.
        if (this.syncing === null && this.queue.length > 0)
          await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
      }
    }
  }

  private commitSoon(): void {
    // A batch retrying for the write lock keeps its pace.
    if (!this.mayCommitNow()) return this.schedule();
    if (this.soonQueued) return;
    this.soonQueued = true;
    queueMicrotask(() => {
      this.soonQueued = false;
      // What ran meanwhile may have started a sync or met the write lock: then the end of that
      // sync, or the retry, commits the queue.
      if (this.mayCommitNow()) this.commitQueued();
    });
  }

  /** No sync this group must wait for is under way. */
  private syncAllowsCommit(): boolean {
    return this.syncing === null || this.options.overlapSyncs === true;
  }

  /** A batch may commit at once: no sync to wait for, no batch retrying for the write lock. */
  private mayCommitNow(): boolean {
    return this.syncAllowsCommit() && this.busySince === null;
  }

  private schedule(): void {
    if (this.syncAllowsCommit() && this.scheduled === null && this.queue.length > 0) this.commitAfter(0);
  }

  /** Commits the queue on the event loop's next turn (0), or after `ms`. */
  private commitAfter(ms: number): void {
    if (ms === 0) {
      const immediate = setImmediate(() => this.commitQueued());
      this.scheduled = { cancel: () => clearImmediate(immediate) };
    } else {
      const timer = setTimeout(() => this.commitQueued(), ms);
      this.scheduled = { cancel: () => clearTimeout(timer) };
    }
  }

  /** Puts the batch back at the head of the queue for a later try; false once retrying has run out. */
  private retryLater(batch: Waiting<I, O>[], error: unknown): boolean {
    const busy = this.options.busy;
    if (busy === undefined || !busy.isBusy(error)) return false;
    const now = Date.now();
    this.busySince ??= { at: now, tries: 0 };
    if (now - this.busySince.at >= busy.retryForMs) return false;
    this.busySince.tries++;
    this.queue = batch.concat(this.queue);
    this.commitAfter(this.busySince.tries <= RETRY_SOON ? 0 : RETRY_EVERY_MS);
    return true;
  }

  private commitQueued(): void {
    if (this.scheduled) {
      this.scheduled.cancel();
      this.scheduled = null;
    }
    const batch = this.queue;
    this.queue = [];
    if (batch.length === 0) return;
    if (this.failure) {
      for (const waiting of batch) waiting.reject(this.failure.error);
      return;
    }
    let results: ItemResult<O>[];
    try {
      results = this.commitBatch(batch.map((waiting) => waiting.item));
    } catch (error) {
      if (this.retryLater(batch, error)) return;
      this.busySince = null;
      for (const waiting of batch) waiting.reject(error);
      this.schedule();
      return;
    }
    this.busySince = null;
    const previous = this.syncing;
    const settled: Promise<void> = this.makeDurable().then(
      async () => {
        // With overlapping syncs, batches settle in commit order, each after the ones before it.
        if (previous !== null) await previous;
        if (this.syncing === settled) this.syncing = null;
        if (this.failure !== null) {
          // A sync before this batch's failed: what it wrote may be gone, and this batch read it.
          const unknown = new OutcomeUnknownError(this.failure.error);
          for (const waiting of batch) waiting.reject(unknown);
          return;
        }
        batch.forEach((waiting, i) => {
          const result = results[i];
          // Committed with its batch, yet without a result: it may have been stored.
          if (result === undefined) waiting.reject(new OutcomeUnknownError(new Error('group commit lost an item')));
          else if (result.ok) waiting.resolve(result.value);
          else waiting.reject(result.error);
        });
        this.schedule();
      },
      async (error: unknown) => {
        if (previous !== null) await previous;
        if (this.syncing === settled) this.syncing = null;
        const cause = error instanceof Error ? error.message : String(error);
        this.failure ??= {
          error: new StoreUnavailableError(
            `the disk could not make the store's log durable (${cause}); nothing is stored until it can`,
            { cause: error },
          ),
          triedAt: Date.now(),
        };
        // The batch committed, and may or may not be on disk: it is neither stored nor refused.
        const unknown = new OutcomeUnknownError(error);
        for (const waiting of batch) waiting.reject(unknown);
        for (const waiting of this.queue) waiting.reject(this.failure.error);
        this.queue = [];
      },
    );
    this.syncing = settled;
  }

  /** Whether the failure is over: `recover` succeeded now (tried at most once a second). */
  private recovered(): boolean {
    const failure = this.failure!;
    const recover = this.options.recover;
    if (recover === undefined || Date.now() - failure.triedAt < RECOVER_EVERY_MS) return false;
    failure.triedAt = Date.now();
    try {
      recover();
    } catch {
      return false;
    }
    this.failure = null;
    return true;
  }
}
