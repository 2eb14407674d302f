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

  /** Resolves at the first `fire()` since the last `wait` returned, or after `ms`. */
  async wait(ms: number): Promise<void> {
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
    this.fired = false;
  }
}
