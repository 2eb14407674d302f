import type { Logger } from 'pino';
import type { NewNotification, NotificationEvent } from '../store/notifications.js';
import type { Store } from '../store/store.js';
import { EVENT_KINDS, isEventKind, type EventKindName } from './event-catalog.js';

/** Bursts of one kind and subject on one channel become one message per this long. */
export const DIGEST_WINDOW_MS = 60_000;
/** Events are gathered this long before they are queued, so a burst is one write. */
const GATHER_MS = 100;
/** Events kept while the store cannot take them; past this the oldest are dropped (and logged). */
const MAX_HELD = 10_000;

/** An event as its source reports it; `at` defaults to now. */
export type EventReport = Omit<NotificationEvent, 'at' | 'kind'> & { kind: EventKindName; at?: string };

/**
 * Where the server says what happened: `tell(accountId, event)` queues the event for every
 * enabled channel of the account that chose its kind (`accountId` null: every account's, for
 * the server's own events such as an expiring certificate). Never throws and never waits: the
 * callers are the request and delivery paths. Events are gathered for a moment and queued in
 * one write to the outbox; while the store is unavailable they are held and queued later.
 *
 * Halts and their release are told through `tellRiskHalted` and `tellRiskReleased` (risk-events.ts);
 * a signal a risk rule stopped is `risk_rule_hit`, told by DeliveryAlerts from its acknowledgement (`RISK_LIMIT`).
 */
export class Notifier {
  private held: Array<{ accountId: string | null; event: NotificationEvent }> = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    /** Called once events are in the outbox (the sender's wake). */
    private readonly queued: () => void,
    private readonly now: () => number = Date.now,
  ) {}

  tell(accountId: string | null, report: EventReport): void {
    if (this.closed || !isEventKind(report.kind)) return;
    const event: NotificationEvent = { ...report, at: report.at ?? new Date(this.now()).toISOString() };
    this.held.push({ accountId, event });
    if (this.held.length > MAX_HELD) {
      const dropped = this.held.splice(0, this.held.length - MAX_HELD);
      this.logger.warn({ dropped: dropped.length }, 'notifications: events dropped while the store was unavailable');
    }
    this.schedule(GATHER_MS);
  }

  /** Queues what is held now; resolves when it is in the outbox (or is held again for later). */
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.flushing) await this.flushing;
    if (this.held.length === 0) return;
    const batch = this.held;
    this.held = [];
    this.flushing = this.queue(batch).finally(() => {
      this.flushing = null;
    });
    await this.flushing;
  }

  private async queue(batch: Array<{ accountId: string | null; event: NotificationEvent }>): Promise<void> {
    try {
      const channelsOf = new Map<string | null, Awaited<ReturnType<Store['notifications']['listChannels']>>>();
      const items: NewNotification[] = [];
      for (const { accountId, event } of batch) {
        let channels = channelsOf.get(accountId);
        if (!channels) {
          channels = await this.store.notifications.listChannels(accountId);
          channelsOf.set(accountId, channels);
        }
        const digested = isEventKind(event.kind) && EVENT_KINDS[event.kind].digested;
        for (const channel of channels) {
          if (!channel.enabled || !channel.events.includes(event.kind)) continue;
          items.push({
            channelId: channel.id,
            accountId: channel.accountId,
            event,
            digestKey: digested ? `${event.kind}:${event.subject.id}` : null,
            digestWindowMs: DIGEST_WINDOW_MS,
          });
        }
      }
      if (items.length === 0) return;
      await this.store.notifications.enqueue(items, new Date(this.now()).toISOString());
      this.queued();
    } catch (err) {
      // Held again, first in line: the next event (or close) tries once more.
      this.held = [...batch, ...this.held];
      this.logger.warn({ err, events: batch.length }, 'notifications: events not queued yet; held for the next try');
      if (!this.closed) this.schedule(5_000);
    }
  }

  private schedule(ms: number): void {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), ms);
    this.timer.unref();
  }

  /** Queues what is held (one try) and takes no more. */
  async close(): Promise<void> {
    await this.flush();
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }
}
