/**
 * Reconnect delays: doubling from `initialMs` up to `maxMs`, each with random jitter (50–100 %
 * of the step) so agents cut off together do not all return in the same millisecond.
 */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly initialMs = 250,
    private readonly maxMs = 10_000,
  ) {}

  next(): number {
    const step = Math.min(this.maxMs, this.initialMs * 2 ** this.attempt);
    this.attempt = Math.min(this.attempt + 1, 30);
    return Math.round(step * (0.5 + Math.random() * 0.5));
  }

  reset(): void {
    this.attempt = 0;
  }
}

/** Sleeps `ms`, or less when `abort` fires. */
export function sleep(ms: number, abort?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (abort?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      abort?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    abort?.addEventListener('abort', done, { once: true });
  });
}
