import autocannon from 'autocannon';
import type { BenchRequest } from './signal-mix.js';

export interface LoadResult {
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  non2xx: number;
  errors: number;
  /** What the errors were, when the load generator says. */
  errorDetail?: string;
}

/** Drives one server with the mix for a fixed time and keeps the figures that matter. */
export async function runLoad(
  url: string,
  requests: BenchRequest[],
  connections: number,
  seconds: number,
): Promise<LoadResult> {
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: requests.map((r) => ({ method: r.method, path: r.path, headers: r.headers, body: r.body })),
  });
  return {
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
