import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { repeatEvery } from '../process/repeat-every.js';
import type { Store } from '../store/store.js';

/** How often the sweep looks for queued deliveries past their deadline. */
export const EXPIRY_SWEEP_INTERVAL_MS = 1_000;
/** Deliveries expired per transaction: one batch holds the store's write lock for about a millisecond. */
export const EXPIRY_SWEEP_BATCH = 200;
/** The pause between two batches of one sweep, so ingest gets the store in between. */
const BATCH_PAUSE_MS = 10;

export interface ExpirySweeper {
  /** Resolves when the sweep under way (if any) has finished. */
  stop(): Promise<void>;
}

/**
 * Expires queued deliveries whose agent did not take them before their deadline, about once a
 * second, so a signal whose agent never comes back says `expired` within seconds of its
 * deadline rather than when the agent next polls. The store tells its expiry watchers, which
 * write the warn line and count the metric, exactly as for a delivery a hand-out found late.
 * Off the request path: a timer, in small batches. A failing sweep (the store unavailable) is
 * logged once until a sweep works again.
 */
export function startExpirySweeper(
  store: Store,
  logger: Logger,
  options: { intervalMs?: number; now?: () => number } = {},
): ExpirySweeper {
  const now = options.now ?? Date.now;
  const intervalMs = options.intervalMs ?? EXPIRY_SWEEP_INTERVAL_MS;
  let stopped = false;
  let failing = false;

  const runSweep = async (): Promise<void> => {
    try {
      while (!stopped) {
        const expired = await store.deliveries.expire(new Date(now()).toISOString(), EXPIRY_SWEEP_BATCH);
        if (expired < EXPIRY_SWEEP_BATCH) break;
        await sleep(BATCH_PAUSE_MS);
      }
      if (failing) logger.info('expiry sweep: the store answers again');
      failing = false;
    } catch (err) {
      if (!failing) logger.warn({ err }, 'expiry sweep failed; it tries again every second');
      failing = true;
    }
  };

  const task = repeatEvery(intervalMs, runSweep, (err) =>
    logger.error(
      { err, task: 'expiry sweep' },
      'expiry sweep: a round failed unexpectedly; the next one runs as planned',
    ),
  );
  return {
    stop: async () => {
      stopped = true;
      await task.stop();
    },
  };
}
