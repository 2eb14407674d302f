import type { Logger } from 'pino';

/** How often the counts are written, and then started again. */
export const WRONG_KEY_WINDOW_MS = 60_000;

/**
 * Beyond this many addresses in one window, the rest are counted together: a sender with many
 * addresses (an IPv6 range) must not grow the table or the log without bound.
 */
export const MAX_WRONG_KEY_ADDRESSES = 10_000;

/**
 * Requests with a source key no source has (401 `INVALID_SOURCE_KEY`), counted per client
 * address and logged as one line per address per minute with its count, in place of an access
 * line each. One client sending wrong keys as fast as it can reached 32,000 requests a second,
 * about 5 MB of access lines a second. Counting is all that is done: requests from the same
 * address with a valid key are not held up or refused (TradingView sends every user's alerts
 * from the same four addresses).
 */
export class WrongKeyLog {
  private counts = new Map<string, number>();
  private overflow = 0;
  private readonly timer: NodeJS.Timeout;
  private windowStartedAt: number;
  /** Every wrong key since the start. */
  total = 0;

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
    windowMs = WRONG_KEY_WINDOW_MS,
  ) {
    this.windowStartedAt = now();
    this.timer = setInterval(() => this.flush(), windowMs);
    this.timer.unref();
  }

  record(clientAddress: string): void {
    this.total++;
    const count = this.counts.get(clientAddress);
    if (count !== undefined) this.counts.set(clientAddress, count + 1);
    else if (this.counts.size < MAX_WRONG_KEY_ADDRESSES) this.counts.set(clientAddress, 1);
    else this.overflow++;
  }

  /** Writes the counts of the window so far and starts a new one. */
  flush(): void {
    const since = new Date(this.windowStartedAt).toISOString();
    const seconds = Math.max(1, Math.round((this.now() - this.windowStartedAt) / 1000));
    this.windowStartedAt = this.now();
    const counts = this.counts;
    const overflow = this.overflow;
    this.counts = new Map();
    this.overflow = 0;
    for (const [clientAddress, count] of counts) {
      this.logger.warn(
        { clientAddress, count, since, seconds, statusCode: 401 },
        `${count} inbound request${count === 1 ? '' : 's'} with a source key no source has`,
      );
    }
    if (overflow > 0) {
      this.logger.warn(
        { clientAddress: 'other', count: overflow, since, seconds, statusCode: 401 },
        `${overflow} more inbound requests with a source key no source has, from addresses past the first ${MAX_WRONG_KEY_ADDRESSES}`,
      );
    }
  }

  /** Writes what is counted and stops the clock (the server closes). */
  close(): void {
    clearInterval(this.timer);
    this.flush();
  }
}
