/**
 * A latch a waiter sleeps on: `fire()` wakes the current wait, or the next one when nobody
 * waits yet, so a wake-up arriving between "looked, found nothing" and "went to sleep" is
 * never lost.
 */
export class WakeLatch {
  private fired = false;
  private release: (() => void) | null = null;

  fire(): void {
    this.fired = true;
    const release = this.release;
    this.release = null;
    release?.();
  }

  /** Resolves true at the first `fire()` since the last wait returned, false after `ms` without one. */
  async wait(ms: number): Promise<boolean> {
    if (!this.fired && ms > 0) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          this.release = null;
          resolve();
        }, ms);
        this.release = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    const fired = this.fired;
    this.fired = false;
    return fired;
  }
}
