import type pg from 'pg';
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
import { inTransaction } from './transaction.js';

interface ChannelRow {
  id: string;
  account_id: string;
  kind: string;
  name: string;
  settings: string;
  secrets: string;
  events: string;
  enabled: boolean;
  created_at: Date;
  failures: number;
  failing_since: Date | null;
  last_error: string | null;
  retry_at: Date | null;
  last_sent_at: Date | null;
  pending: string;
}

interface OutboxRow {
  id: string;
  channel_id: string;
  account_id: string;
  event: string;
  count: number;
  examples: string;
  first_at: Date;
  last_at: Date;
  attempts: number;
  state: string;
  last_error: string | null;
}

const CHANNEL_COLUMNS = `c.*, (SELECT count(*) FROM notification_outbox o WHERE o.channel_id = c.id AND o.state = 'pending') AS pending`;

function timeOrNull(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}

function channelFrom(row: ChannelRow): ChannelWithState {
  return {
    id: row.id,
    accountId: row.account_id,
    kind: row.kind as ChannelKind,
    name: row.name,
    settings: JSON.parse(row.settings) as NotificationChannel['settings'],
    secrets: JSON.parse(row.secrets) as NotificationChannel['secrets'],
    events: JSON.parse(row.events) as string[],
    enabled: row.enabled,
    createdAt: row.created_at.toISOString(),
    state: {
      failures: row.failures,
      failingSince: timeOrNull(row.failing_since),
      lastError: row.last_error,
      retryAt: timeOrNull(row.retry_at),
      lastSentAt: timeOrNull(row.last_sent_at),
      pending: Number(row.pending),
    },
  };
}

function messageFrom(row: OutboxRow): OutboxMessage {
  return {
    id: Number(row.id),
    channelId: row.channel_id,
    accountId: row.account_id,
    kind: row.event,
    count: row.count,
    examples: JSON.parse(row.examples) as NotificationEvent[],
    firstAt: row.first_at.toISOString(),
    lastAt: row.last_at.toISOString(),
    attempts: row.attempts,
  };
}

/**
 * Notification channels and the outbox, shared by every instance: a claim locks the due rows
 * with FOR UPDATE SKIP LOCKED and leases them in the same statement, so two instances never
 * send one message (and per channel only its oldest waiting message can be claimed at all).
 */
export class PostgresNotifications implements Notifications {
  constructor(private readonly pool: pg.Pool) {}

  async createChannel(channel: NotificationChannel): Promise<void> {
    await this.pool.query(
      `INSERT INTO notification_channels (id, account_id, kind, name, settings, secrets, events, enabled, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [
        channel.id,
        channel.accountId,
        channel.kind,
        channel.name,
        JSON.stringify(channel.settings),
        JSON.stringify(channel.secrets),
        JSON.stringify(channel.events),
        channel.enabled,
        isoTime(channel.createdAt),
      ],
    );
  }

  async listChannels(accountId: string | null): Promise<ChannelWithState[]> {
    const { rows } =
      accountId === null
        ? await this.pool.query<ChannelRow>(
            `SELECT ${CHANNEL_COLUMNS} FROM notification_channels c ORDER BY created_at, id`,
          )
        : await this.pool.query<ChannelRow>(
            `SELECT ${CHANNEL_COLUMNS} FROM notification_channels c WHERE account_id = $1 ORDER BY created_at, id`,
            [accountId],
          );
    return rows.map(channelFrom);
  }

  async getChannel(id: string): Promise<ChannelWithState | null> {
    const { rows } = await this.pool.query<ChannelRow>(
      `SELECT ${CHANNEL_COLUMNS} FROM notification_channels c WHERE id = $1`,
      [id],
    );
    return rows[0] ? channelFrom(rows[0]) : null;
  }

  async updateChannel(id: string, patch: ChannelPatch): Promise<ChannelWithState | null> {
    const changed = await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<ChannelRow>('SELECT * FROM notification_channels WHERE id = $1 FOR UPDATE', [
        id,
      ]);
      const current = rows[0];
      if (!current) return false;
      const secrets = { ...(JSON.parse(current.secrets) as Record<string, string>), ...patch.secrets };
      await client.query(
        'UPDATE notification_channels SET name = $1, settings = $2, secrets = $3, events = $4, enabled = $5 WHERE id = $6',
        [
          patch.name ?? current.name,
          patch.settings ? JSON.stringify(patch.settings) : current.settings,
          JSON.stringify(secrets),
          patch.events ? JSON.stringify(patch.events) : current.events,
          patch.enabled ?? current.enabled,
          id,
        ],
      );
      return true;
    });
    return changed ? this.getChannel(id) : null;
  }

  async deleteChannel(id: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM notification_channels WHERE id = $1', [id]);
    return (rowCount ?? 0) > 0;
  }

  async enqueue(items: NewNotification[], now: string): Promise<void> {
    if (items.length === 0) return;
    await inTransaction(this.pool, async (client) => {
      for (const item of items) await this.enqueueOne(client, item, isoTime(now));
    });
  }

  private async enqueueOne(client: pg.PoolClient, item: NewNotification, now: string): Promise<void> {
    const eventAt = isoTime(item.event.at);
    let due = now;
    if (item.digestKey !== null) {
      // A row being claimed right now is waited for, then seen leased and passed over.
      const { rows } = await client.query<{ id: string; examples: string }>(
        `SELECT id, examples FROM notification_outbox
         WHERE channel_id = $1 AND digest_key = $2 AND state = 'pending' AND lease_owner IS NULL
         ORDER BY id DESC LIMIT 1 FOR UPDATE`,
        [item.channelId, item.digestKey],
      );
      const waiting = rows[0];
      if (waiting) {
        const examples = JSON.parse(waiting.examples) as NotificationEvent[];
        if (examples.length < DIGEST_EXAMPLES) examples.push(item.event);
        await client.query(
          'UPDATE notification_outbox SET count = count + 1, examples = $1, last_at = greatest(last_at, $2) WHERE id = $3',
          [JSON.stringify(examples), eventAt, waiting.id],
        );
        return;
      }
      const previous = await client.query<{ at: Date | null }>(
        'SELECT max(next_attempt_at) AS at FROM notification_outbox WHERE channel_id = $1 AND digest_key = $2',
        [item.channelId, item.digestKey],
      );
      const last = previous.rows[0]?.at;
      if (last) {
        const held = new Date(last.getTime() + item.digestWindowMs).toISOString();
        if (held > due) due = held;
      }
    }
    await client.query(
      `INSERT INTO notification_outbox (channel_id, account_id, event, digest_key, examples, first_at, last_at, next_attempt_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6, $7)`,
      [item.channelId, item.accountId, item.event.kind, item.digestKey, JSON.stringify([item.event]), eventAt, due],
    );
  }

  async claim(request: ClaimRequest): Promise<OutboxMessage[]> {
    const now = isoTime(request.now);
    const { rows } = await this.pool.query<OutboxRow>(
      `WITH due AS (
         SELECT o.id FROM notification_outbox o JOIN notification_channels c ON c.id = o.channel_id
         WHERE o.state = 'pending' AND o.next_attempt_at <= $1
           AND (o.lease_until IS NULL OR o.lease_until <= $1)
           AND c.enabled AND (c.retry_at IS NULL OR c.retry_at <= $1)
           AND NOT (c.rate_window_start > $1::timestamptz - interval '1 minute' AND c.rate_window_count >= $2)
           AND NOT EXISTS (SELECT 1 FROM notification_outbox p
             WHERE p.channel_id = o.channel_id AND p.state = 'pending' AND p.id < o.id AND p.next_attempt_at <= $1)
         ORDER BY o.id LIMIT $3
         FOR UPDATE OF o SKIP LOCKED
       )
       UPDATE notification_outbox n SET lease_owner = $4, lease_until = $1::timestamptz + $5 * interval '1 millisecond'
       FROM due WHERE n.id = due.id
       RETURNING n.*`,
      [now, request.perChannelPerMinute, request.limit, request.owner, request.leaseMs],
    );
    return rows.map(messageFrom).sort((a, b) => a.id - b.id);
  }

  async settle(id: number, owner: string, outcome: SendOutcome): Promise<boolean> {
    const at = isoTime(outcome.at);
    return inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ channel_id: string }>(
        `SELECT channel_id FROM notification_outbox WHERE id = $1 AND lease_owner = $2 AND state = 'pending' FOR UPDATE`,
        [id, owner],
      );
      const row = rows[0];
      if (!row) return false;
      if (outcome.sent) {
        await client.query(
          `UPDATE notification_outbox SET state = 'sent', sent_at = $1, attempts = attempts + 1,
           lease_owner = NULL, lease_until = NULL, last_error = NULL WHERE id = $2`,
          [at, id],
        );
        await client.query(
          `UPDATE notification_channels SET failures = 0, failing_since = NULL, retry_at = NULL, last_sent_at = $1,
           rate_window_count = CASE WHEN rate_window_start > $1::timestamptz - interval '1 minute' THEN rate_window_count + 1 ELSE 1 END,
           rate_window_start = CASE WHEN rate_window_start > $1::timestamptz - interval '1 minute' THEN rate_window_start ELSE $1 END
           WHERE id = $2`,
          [at, row.channel_id],
        );
      } else {
        await client.query(
          `UPDATE notification_outbox SET state = $1, attempts = attempts + 1, last_error = $2,
           lease_owner = NULL, lease_until = NULL WHERE id = $3`,
          [outcome.giveUp ? 'abandoned' : 'pending', outcome.error, id],
        );
        await client.query(
          `UPDATE notification_channels SET failures = failures + 1, failing_since = coalesce(failing_since, $1),
           last_error = $2, retry_at = $3 WHERE id = $4`,
          [at, outcome.error, isoTime(outcome.retryAt), row.channel_id],
        );
      }
      return true;
    });
  }

  async recent(
    channelId: string,
    limit: number,
  ): Promise<Array<OutboxMessage & { state: string; lastError: string | null }>> {
    const { rows } = await this.pool.query<OutboxRow>(
      'SELECT * FROM notification_outbox WHERE channel_id = $1 ORDER BY id DESC LIMIT $2',
      [channelId, limit],
    );
    return rows.map((row) => ({ ...messageFrom(row), state: row.state, lastError: row.last_error }));
  }

  async prune(before: string): Promise<number> {
    const { rowCount } = await this.pool.query(
      `DELETE FROM notification_outbox WHERE state IN ('sent', 'abandoned') AND coalesce(sent_at, last_at) < $1`,
      [isoTime(before)],
    );
    return rowCount ?? 0;
  }
}
