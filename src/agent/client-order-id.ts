import { createHash } from 'node:crypto';

/**
 * Client order ids derived from the signal id: the same signal always yields the same ids, so
 * a retried request or a restarted agent finds the order it already placed instead of placing
 * a second one. Letters and digits only and at most 32 characters, which every exchange CCXT
 * knows accepts (OKX: alphanumeric ≤ 32; Binance and Bybit: ≤ 36).
 *
 * `sg` + 16 hex digits of SHA-256(signal id) + a step suffix of at most 14 characters:
 * `o` the opening order, `c1`… the closes, `s0`/`t0k` the stop and targets of revision 0…
 */
export function clientOrderId(signalId: string, step: string): string {
  if (!/^[a-z0-9]{1,14}$/.test(step))
    throw new RangeError(`a client order id step is 1 to 14 letters or digits, got "${step}"`);
  return `sg${createHash('sha256').update(signalId).digest('hex').slice(0, 16)}${step}`;
}

/** Whether a client order id is one this agent could have made (for reconciliation). */
export function isOwnClientOrderId(id: string | null | undefined): boolean {
  return typeof id === 'string' && /^sg[0-9a-f]{16}[a-z0-9]{1,14}$/.test(id);
}
