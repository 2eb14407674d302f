/**
 * Named leases, each held by one instance at a time: work that must be done once across the
 * instances sharing a store (watching agents' presence, the store and the certificate for
 * notifications) is done only by the instance holding its lease. A lease not renewed within its
 * time passes to the next instance that asks, so a dead holder is replaced.
 */
export interface Leases {
  /**
   * Takes or renews the lease `name` for `holder` until `now + ttlMs`; true when `holder` holds it
   * now (it was free, ran out, or was already its), false when another holder's is still running.
   */
  hold(name: string, holder: string, now: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up if `holder` has it, so another instance takes it at once (a clean stop). */
  release(name: string, holder: string): Promise<void>;
}
