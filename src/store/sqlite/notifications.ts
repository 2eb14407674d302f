import { isoTime } from '../iso-time.js';
import {
  DIGEST_EXAMPLES,
  type ChannelKind,
  type ChannelPatch,
  type ChannelWithState,
  type ClaimRequest,
  type NewNotification,
  type NotificationChannel,
  type NotificationEvent,
  type Notifications,
  type OutboxMessage,
  type SendOutcome,
} from '../notifications.js';
import type { SqliteConnection } from './connection.js';

interface ChannelRow {
  id: string;
  account_id: string;
  kind: string;
  name: string;
  settings: string;
  secrets: string;
  events: string;
  enabled: number;
  created_at: string;
  failures: number;
  failing_since: string | null;
  last_error: string | null;
  retry_at: string | null;
  last_sent_at: string | null;
  pending: number;
}

interface OutboxRow {
  id: number;
  channel_id: string;
  account_id: string;
  event: string;
  count: number;
  examples: string;
  first_at: string;
  last_at: string;
  attempts: number;
  state: string;
  last_error: string | null;
}

const CHANNEL_COLUMNS = `c.*, (SELECT count(*) FROM notification_outbox o WHERE o.channel_id = c.id AND o.state = 'pending') AS pending`;

function channelFrom(row: ChannelRow): ChannelWithState {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind as ChannelKind,
    name: row.name,
    settings: JSON.parse(row.settings) as NotificationChannel['settings'],
    secrets: JSON.parse(row.secrets) as NotificationChannel['secrets'],
    events: JSON.parse(row.events) as string[],
    enabled: row.enabled === 1,
    createdAt: row.created_at,
    state: {
      failures: row.failures,
      failingSince: row.failing_since,
      lastError: row.last_error,
      retryAt: row.retry_at,
      lastSentAt: row.last_sent_at,
      pending: row.pending,
    },
  };
}

function messageFrom(row: OutboxRow): OutboxMessage {
  return {
    id: row.id,
    channelId: row.channel_id,
    accountId: row.account_id,
    kind: row.event,
    count: row.count,
    examples: JSON.parse(row.examples) as NotificationEvent[],
    firstAt: row.first_at,
    lastAt: row.last_at,
    attempts: row.attempts,
  };
}

/** Notification channels and the outbox: `notification_channels`, `notification_outbox`. */
export class SqliteNotifications implements Notifications {
  constructor(private readonly connection: SqliteConnection) {}

  async createChannel(channel: NotificationChannel): Promise<void> {
    this.connection
      .stmt(
        `INSERT INTO notification_channels (id, account_id, kind, name, settings, secrets, events, enabled, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        channel.id,
        channel.accountId,
        channel.kind,
        channel.name,
        JSON.stringify(channel.settings),
        JSON.stringify(channel.secrets),
        JSON.stringify(channel.events),
        channel.enabled ? 1 : 0,
        isoTime(channel.createdAt),
      );
  }

  async listChannels(accountId: string | null): Promise<ChannelWithState[]> {
    const rows = (
      accountId === null
        ? this.connection.stmt(`SELECT ${CHANNEL_COLUMNS} FROM notification_channels c ORDER BY created_at, id`).all()
        : this.connection
            .stmt(`SELECT ${CHANNEL_COLUMNS} FROM notification_channels c WHERE account_id = ? ORDER BY created_at, id`)
            .all(accountId)
    ) as ChannelRow[];
    return rows.map(channelFrom);
  }

  async getChannel(id: string): Promise<ChannelWithState | null> {
    const row = this.connection.stmt(`SELECT ${CHANNEL_COLUMNS} FROM notification_channels c WHERE id = ?`).get(id) as
      ChannelRow | undefined;
    return row ? channelFrom(row) : null;
  }

  async updateChannel(id: string, patch: ChannelPatch): Promise<ChannelWithState | null> {
    const changed = this.connection.db
      .transaction(() => {
        const current = this.connection.stmt('SELECT * FROM notification_channels WHERE id = ?').get(id) as
          ChannelRow | undefined;
        if (!current) return false;
        const secrets = { ...(JSON.parse(current.secrets) as Record<string, string>), ...patch.secrets };
        this.connection
          .stmt(
            'UPDATE notification_channels SET name = ?, settings = ?, secrets = ?, events = ?, enabled = ? WHERE id = ?',
          )
          .run(
            patch.name ?? current.name,
            patch.settings ? JSON.stringify(patch.settings) : current.settings,
            JSON.stringify(secrets),
            patch.events ? JSON.stringify(patch.events) : current.events,
            patch.enabled === undefined ? current.enabled : patch.enabled ? 1 : 0,
            id,
          );
        return true;
      })
      .immediate();
    return changed ? this.getChannel(id) : null;
  }

  async deleteChannel(id: string): Promise<boolean> {
    return this.connection.stmt('DELETE FROM notification_channels WHERE id = ?').run(id).changes > 0;
  }

  async enqueue(items: NewNotification[], now: string): Promise<void> {
    const at = isoTime(now);
    this.connection.db
      .transaction(() => {
        for (const item of items) this.enqueueOne(item, at);
      })
      .immediate();
  }

  private enqueueOne(item: NewNotification, now: string): void {
    const eventAt = isoTime(item.event.at);
    if (item.digestKey !== null) {
      const waiting = this.connection
        .stmt(
          `SELECT id, count, examples FROM notification_outbox
           WHERE channel_id = ? AND digest_key = ? AND state = 'pending' AND lease_owner IS NULL
           ORDER BY id DESC LIMIT 1`,
        )
        .get(item.channelId, item.digestKey) as { id: number; count: number; examples: string } | undefined;
      if (waiting) {
        const examples = JSON.parse(waiting.examples) as NotificationEvent[];
        if (examples.length < DIGEST_EXAMPLES) examples.push(item.event);
        this.connection
          .stmt(
            'UPDATE notification_outbox SET count = count + 1, examples = ?, last_at = max(last_at, ?) WHERE id = ?',
          )
          .run(JSON.stringify(examples), eventAt, waiting.id);
        return;
      }
    }
    let due = now;
    if (item.digestKey !== null) {
      const previous = this.connection
        .stmt('SELECT max(next_attempt_at) AS at FROM notification_outbox WHERE channel_id = ? AND digest_key = ?')
        .get(item.channelId, item.digestKey) as { at: string | null };
      if (previous.at !== null) {
        const held = new Date(Date.parse(previous.at) + item.digestWindowMs).toISOString();
        if (held > due) due = held;
      }
    }
    this.connection
      .stmt(
        `INSERT INTO notification_outbox (channel_id, account_id, event, digest_key, examples, first_at, last_at, next_attempt_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        item.channelId,
        item.accountId,
        item.event.kind,
        item.digestKey,
        JSON.stringify([item.event]),
        eventAt,
        eventAt,
        due,
      );
  }

  async claim(request: ClaimRequest): Promise<OutboxMessage[]> {
    const now = isoTime(request.now);
    const minuteAgo = new Date(Date.parse(now) - 60_000).toISOString();
    const until = new Date(Date.parse(now) + request.leaseMs).toISOString();
    return this.connection.db
      .transaction(() => {
        const rows = this.connection
          .stmt(
            `SELECT o.* FROM notification_outbox o JOIN notification_channels c ON c.id = o.channel_id
             WHERE o.state = 'pending' AND o.next_attempt_at <= @now
               AND (o.lease_until IS NULL OR o.lease_until <= @now)
               AND c.enabled = 1 AND (c.retry_at IS NULL OR c.retry_at <= @now)
               AND NOT (c.rate_window_start > @minuteAgo AND c.rate_window_count >= @perMinute)
               AND NOT EXISTS (SELECT 1 FROM notification_outbox p
                 WHERE p.channel_id = o.channel_id AND p.state = 'pending' AND p.id < o.id AND p.next_attempt_at <= @now)
             ORDER BY o.id LIMIT @limit`,
          )
          .all({ now, minuteAgo, perMinute: request.perChannelPerMinute, limit: request.limit }) as OutboxRow[];
        for (const row of rows) {
          this.connection
            .stmt('UPDATE notification_outbox SET lease_owner = ?, lease_until = ? WHERE id = ?')
            .run(request.owner, until, row.id);
        }
        return rows.map(messageFrom);
      })
      .immediate();
  }

  async settle(id: number, owner: string, outcome: SendOutcome): Promise<boolean> {
    const at = isoTime(outcome.at);
    return this.connection.db
      .transaction(() => {
        const row = this.connection
          .stmt(`SELECT channel_id FROM notification_outbox WHERE id = ? AND lease_owner = ? AND state = 'pending'`)
          .get(id, owner) as { channel_id: string } | undefined;
        if (!row) return false;
        if (outcome.sent) {
          this.connection
            .stmt(
              `UPDATE notification_outbox SET state = 'sent', sent_at = ?, attempts = attempts + 1,
               lease_owner = NULL, lease_until = NULL, last_error = NULL WHERE id = ?`,
            )
            .run(at, id);
          const minuteAgo = new Date(Date.parse(at) - 60_000).toISOString();
          this.connection
            .stmt(
              `UPDATE notification_channels SET failures = 0, failing_since = NULL, retry_at = NULL, last_sent_at = @at,
               rate_window_count = CASE WHEN rate_window_start > @minuteAgo THEN rate_window_count + 1 ELSE 1 END,
               rate_window_start = CASE WHEN rate_window_start > @minuteAgo THEN rate_window_start ELSE @at END
               WHERE id = @id`,
            )
            .run({ at, minuteAgo, id: row.channel_id });
        } else {
          this.connection
            .stmt(
              `UPDATE notification_outbox SET state = ?, attempts = attempts + 1, last_error = ?,
               lease_owner = NULL, lease_until = NULL WHERE id = ?`,
            )
            .run(outcome.giveUp ? 'abandoned' : 'pending', outcome.error, id);
          this.connection
            .stmt(
              `UPDATE notification_channels SET failures = failures + 1, failing_since = coalesce(failing_since, ?),
               last_error = ?, retry_at = ? WHERE id = ?`,
            )
            .run(at, outcome.error, isoTime(outcome.retryAt), row.channel_id);
        }
        return true;
      })
      .immediate();
  }

  async recent(
    channelId: string,
    limit: number,
  ): Promise<Array<OutboxMessage & { state: string; lastError: string | null }>> {
    const rows = this.connection
      .stmt('SELECT * FROM notification_outbox WHERE channel_id = ? ORDER BY id DESC LIMIT ?')
      .all(channelId, limit) as OutboxRow[];
    return rows.map((row) => ({ ...messageFrom(row), state: row.state, lastError: row.last_error }));
  }

  async prune(before: string): Promise<number> {
    return this.connection
      .stmt(`DELETE FROM notification_outbox WHERE state IN ('sent', 'abandoned') AND coalesce(sent_at, last_at) < ?`)
      .run(isoTime(before)).changes;
  }
}
