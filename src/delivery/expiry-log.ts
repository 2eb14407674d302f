import type { Logger } from 'pino';
import type { ExpiredDelivery } from '../store/records.js';

/**
 * Logs, at `warn`, every delivery a hand-out found past its deadline: a signal that was never
 * executed because it was late, which its trader must hear of. `lateMs` is how far past its
 * `expiresAt` it was found (its agent was away or slow that long); `ageMs` its age then.
 */
export function logExpiredDeliveries(logger: Logger, expired: ExpiredDelivery[]): void {
  for (const delivery of expired) {
    const at = Date.parse(delivery.expiredAt);
    logger.warn(
      {
        signalId: delivery.signalId,
        agentId: delivery.agentId,
        expiresAt: delivery.expiresAt,
        lateMs: at - Date.parse(delivery.expiresAt),
        ...(delivery.receivedAt !== '' && { ageMs: at - Date.parse(delivery.receivedAt) }),
      },
      "delivery expired before its agent acknowledged it: it is not handed out again (a late signal is not executed); if the agent was running, raise the source's maxSignalAgeSeconds",
    );
  }
}
