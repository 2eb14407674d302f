import type { Logger } from 'pino';
import type { OutboxMessage } from '../store/notifications.js';
import type { Store } from '../store/store.js';
import { sendThrough, TransportError, type TransportOptions } from './channel-transports.js';
import { notificationText } from './notification-text.js';

export interface SenderOptions {
  /** This instance's id: only it may settle what it claimed. */
  owner: string;
  /** The dashboard's address, for the links in messages (the public URL). */
  dashboardUrl: string;
  transport: TransportOptions;
  /** SIGNALGATE_NOTIFY_PER_MINUTE: no channel receives more messages a minute. */
  perChannelPerMinute: number;
  /** SIGNALGATE_NOTIFY_RETRY: the first retry's delay, doubling per failure in a row up to maxMs. */
  retry?: { firstMs: number; maxMs: number };
  /** How often the outbox is looked at when nothing wakes the sender. */
  intervalMs?: number;
  now?: () => number;
}

/** A claim outlives a slow receiver (TransportOptions.timeoutMs) with room to settle. */
const LEASE_MS = 60_000;
/** The first retry comes after this long, doubling per failure in a row up to the longest. */
const DEFAULT_BACKOFF = { firstMs: 5_000, maxMs: 10 * 60_000 };
/** A message that could not be sent for this long is abandoned (shown as such in the dashboard). */
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;
const CLAIM_LIMIT = 20;

export interface NotificationSender {
  /** Looks at the outbox now (something was queued). */
  wake(): void;
  /** No round starts after this; resolves when the one under way has finished. */
  stop(): Promise<void>;
}

/** The delay before the next attempt at a channel that has failed `failures` times in a row. */
export function backoffMs(
  failures: number,
  retryAfterMs: number | null,
  schedule: { firstMs: number; maxMs: number } = DEFAULT_BACKOFF,
): number {
  const doubled = Math.min(schedule.maxMs, schedule.firstMs * 2 ** Math.min(30, Math.max(0, failures - 1)));
  return Math.max(doubled, retryAfterMs ?? 0);
}

/**
 * Sends what waits in the outbox: claims due messages (one per channel at a time, so each channel
 * receives its messages in order), sends each through its channel, and records the outcome —
 * sent, or failed with the channel backed off. Several instances on one PostgreSQL database each
 * run one; the claim's lease keeps them from sending a message twice.
 */
export function startNotificationSender(store: Store, logger: Logger, options: SenderOptions): NotificationSender {
  const now = options.now ?? Date.now;
  // A retry is due no later than its channel's back-off says, so the outbox is looked at as often.
  const intervalMs = options.intervalMs ?? Math.min(1000, options.retry?.firstMs ?? 1000);
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  let running: Promise<void> | null = null;
  let again = false;

  const sendOne = async (message: OutboxMessage): Promise<void> => {
    const channel = await store.notifications.getChannel(message.channelId);
    if (channel === null) return;
    const text = notificationText(message, options.dashboardUrl);
    try {
      await sendThrough(channel, text, message.id, options.transport);
      await store.notifications.settle(message.id, options.owner, { sent: true, at: new Date(now()).toISOString() });
      logger.info(
        { channelId: channel.id, kind: message.kind, count: message.count },
        `notification sent through ${channel.kind}`,
      );
    } catch (error) {
      if (!(error instanceof TransportError)) throw error;
      const failures = channel.state.failures + 1;
      const giveUp = now() - Date.parse(message.firstAt) > GIVE_UP_AFTER_MS;
      const retryAt = new Date(now() + backoffMs(failures, error.retryAfterMs, options.retry)).toISOString();
      await store.notifications.settle(message.id, options.owner, {
        sent: false,
        at: new Date(now()).toISOString(),
        error: error.message,
        retryAt,
        giveUp,
      });
      logger.warn(
        { channelId: channel.id, kind: message.kind, failures, retryAt, giveUp },
        `notification not sent through ${channel.kind}: ${error.message}`,
      );
    }
  };

  const round = async (): Promise<void> => {
    do {
      again = false;
      const claimed = await store.notifications.claim({
        owner: options.owner,
        now: new Date(now()).toISOString(),
        leaseMs: LEASE_MS,
        limit: CLAIM_LIMIT,
        perChannelPerMinute: options.perChannelPerMinute,
      });
      // One message per channel is claimed, so channels are sent to side by side.
      await Promise.all(claimed.map(sendOne));
      // A message settled opens its channel's next one: look again at once.
      if (claimed.length > 0) again = true;
    } while (again && !stopped);
  };

  const run = (): void => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    if (timer) clearTimeout(timer);
    running = round()
      .catch((err: unknown) => logger.warn({ err }, 'notifications: a round failed; the next one tries again'))
      .finally(() => {
        running = null;
        if (stopped) return;
        timer = setTimeout(run, intervalMs);
        timer.unref();
      });
  };
  run();

  return {
    wake: run,
    stop: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
