import type { ServerOptions } from 'node:http';

/**
 * How long a connection may take, chosen for webhooks: a sender such as TradingView gives up
 * after about 3 s, so a request still arriving after several seconds helps no one, and a slow
 * or stalled client must not hold a connection for a minute or more.
 */
export const CONNECTION_TIMEOUTS = {
  /** From the connection's first byte of a request to the end of its headers. */
  headersMs: 5_000,
  /** From the first byte of a request to the end of its body (a body is at most 64 KiB). */
  requestMs: 10_000,
  /**
   * An idle keep-alive connection is closed after this. Longer than the idle timeout of the
   * usual reverse proxies' upstream pools (60 s), so a proxy never reuses a connection this
   * server is just closing (which would fail a POST in flight).
   */
  keepAliveMs: 72_000,
  /**
   * How often the two timeouts above are checked. Node checks every 30 s by default, so a
   * stalled client could hold its connection up to 30 s past its timeout.
   */
  checkEveryMs: 1_000,
} as const;

/** CONNECTION_TIMEOUTS as options of `http.createServer` (and `https.createServer`). */
export function connectionTimeoutOptions(): ServerOptions {
  return {
    headersTimeout: CONNECTION_TIMEOUTS.headersMs,
    requestTimeout: CONNECTION_TIMEOUTS.requestMs,
    keepAliveTimeout: CONNECTION_TIMEOUTS.keepAliveMs,
    connectionsCheckingInterval: CONNECTION_TIMEOUTS.checkEveryMs,
  };
}
