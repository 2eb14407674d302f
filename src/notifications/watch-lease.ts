import type { Store } from '../store/store.js';

/** The lease's name in the store: one holder across the instances sharing it. */
const NAME = 'notifications.watch';
/** Renewed at each round of the server's watch (every 15 s); others may take it after this long. */
export const WATCH_LEASE_MS = 45_000;
/** The holder stops counting on the lease this long before others may take it (clock skew, a slow renewal). */
const MARGIN_MS = 15_000;

/**
 * The one instance that watches what every instance could see alike — agents' presence, the
 * store gone and back, the TLS certificate's end — so a deployment of several instances on one
 * PostgreSQL database tells each such event once (decision 0040-one-watcher). SQLite has one
 * instance; it takes the lease at once and keeps it.
 */
export class WatchLease {
  private heldUntil = 0;

  constructor(
    private readonly store: Store,
    private readonly holder: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes or renews the lease; true while this instance is the watcher. A store error counts as not held. */
  async renew(): Promise<boolean> {
    const asked = this.now();
    const held = await this.store.leases
      .hold(NAME, this.holder, new Date(asked).toISOString(), WATCH_LEASE_MS)
      .catch(() => false);
    this.heldUntil = held ? asked + WATCH_LEASE_MS - MARGIN_MS : 0;
    return held;
  }

  /** Whether this instance is the watcher now (by its last renewal). */
  held(): boolean {
    return this.now() < this.heldUntil;
  }

  /** Gives the lease up (a clean stop), so another instance takes it at its next round. */
  async release(): Promise<void> {
    this.heldUntil = 0;
    await this.store.leases.release(NAME, this.holder).catch(() => undefined);
  }
}
