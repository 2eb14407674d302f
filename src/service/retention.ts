import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { IDEMPOTENCY_WINDOW_MS } from '../inbound/receive-signal.js';
import { repeatEvery } from '../process/repeat-every.js';
import type { Store } from '../store/store.js';

/** Rows deleted per transaction: one batch holds the store's write lock for a few milliseconds. */
export const RETENTION_BATCH = 200;
/**
 * A round runs at start and then this often, or once per retention period when that is
 * shorter (each round runs until nothing old is left).
 */
export const RETENTION_INTERVAL_MS = 30_000;
/** The pause between two batches of a round, so ingest gets the store in between. */
const BATCH_PAUSE_MS = 10;

export interface Retention {
  /** Resolves when the round under way (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * Deletes signal records (with their deliveries) older than `retentionMs`, and idempotency
 * keys older than their 24 h window, in small batches off the request path: a round at start
 * and one every `intervalMs`. A failing round (the store unavailable) is logged and the next
 * round tries again.
 */
export function startRetention(
  store: Store,
  logger: Logger,
  options: { retentionMs: number; intervalMs?: number; now?: () => number },
): Retention {
  const now = options.now ?? Date.now;
  let stopped = false;

  const prune = async (what: 'signals' | 'idempotency keys', ageMs: number): Promise<number> => {
    let total = 0;
    while (!stopped) {
      const before = new Date(now() - ageMs).toISOString();
      const deleted =
        what === 'signals'
          ? await store.retention.pruneSignals(before, RETENTION_BATCH)
          : await store.retention.pruneIdempotencyKeys(before, RETENTION_BATCH);
      total += deleted;
      if (deleted < RETENTION_BATCH) break;
      await sleep(BATCH_PAUSE_MS);
    }
    return total;
  };

  const runRound = async (): Promise<void> => {
    try {
      // Keys first: a signal is kept while a key still names it.
      const keys = await prune('idempotency keys', IDEMPOTENCY_WINDOW_MS);
      const signals = await prune('signals', options.retentionMs);
      if (keys > 0 || signals > 0) logger.info({ signals, idempotencyKeys: keys }, 'retention: deleted old records');
    } catch (err) {
      logger.warn({ err }, 'retention: a round failed; the next one tries again');
    }
  };

  const task = repeatEvery(
    options.intervalMs ?? Math.min(RETENTION_INTERVAL_MS, options.retentionMs),
    runRound,
    (err) =>
      logger.error({ err, task: 'retention' }, 'retention: a round failed unexpectedly; the next one runs as planned'),
  );
  return {
    stop: async () => {
      stopped = true;
      await task.stop();
    },
  };
}
