/** Why a send failed, in words that never hold a channel's secret. */
export class TransportError extends Error {
  constructor(
    message: string,
    /** How long the receiver asked us to wait (Telegram's retry_after, HTTP Retry-After), if it did. */
    readonly retryAfterMs: number | null = null,
  ) {
    super(message);
  }
}
