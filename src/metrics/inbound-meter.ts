/** Upper bounds (seconds) of the inbound duration histogram's buckets. */
export const INBOUND_DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

/**
 * Counts inbound answers by HTTP status and their durations, on the hot path. It only adds to
 * numbers in preallocated arrays (no label objects, no strings), so a request costs a few
 * additions; the metrics read the totals when scraped.
 */
export class InboundMeter {
  /** Answers so far, indexed by HTTP status. */
  readonly byStatus = new Float64Array(600);
  /** Answers so far in each duration bucket (not cumulative); the last one is +Inf. */
  readonly buckets = new Float64Array(INBOUND_DURATION_BUCKETS.length + 1);
  durationSum = 0;
  count = 0;

  /** One answer with `status`, `ms` milliseconds after its request came in. */
  record(status: number, ms: number): void {
    this.byStatus[status >= 0 && status < 600 ? status : 0]! += 1;
    const seconds = ms / 1000;
    let bucket = 0;
    while (bucket < INBOUND_DURATION_BUCKETS.length && seconds > INBOUND_DURATION_BUCKETS[bucket]!) bucket++;
    this.buckets[bucket]! += 1;
    this.durationSum += seconds;
    this.count += 1;
  }
}
