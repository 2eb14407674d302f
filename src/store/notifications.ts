/** The channels a notification can go through. */
export type ChannelKind = 'webhook' | 'telegram' | 'email' | 'discord' | 'slack';

/**
 * A channel an account is told through. `settings` are shown (a chat id, an address, a host);
 * `secrets` (a bot token, an SMTP password, a webhook URL or signing secret) are kept to send
 * with and never leave the server after creation.
 */
export interface NotificationChannel {
  id: string;
  accountId: string;
  kind: ChannelKind;
  name: string;
  settings: Record<string, string | number | boolean>;
  secrets: Record<string, string>;
  /** The event kinds this channel is told of. */
  events: string[];
  enabled: boolean;
  createdAt: string;
}

/** How sending through a channel goes, as every instance sees it. */
export interface ChannelState {
  /** Failed attempts in a row; 0 once one succeeds. */
  failures: number;
  failingSince: string | null;
  lastError: string | null;
  /** No message goes to the channel before this (its back-off), or null. */
  retryAt: string | null;
  lastSentAt: string | null;
  /** Messages waiting for the channel. */
  pending: number;
}

export type ChannelWithState = NotificationChannel & { state: ChannelState };

export interface ChannelPatch {
  name?: string;
  settings?: Record<string, string | number | boolean>;
  secrets?: Record<string, string>;
  events?: string[];
  enabled?: boolean;
}

/** One thing that happened, as a message tells it (formatting happens when it is sent). */
export interface NotificationEvent {
  /** An event kind of the catalog, e.g. `signal_refused`. */
  kind: string;
  at: string;
  /** What it happened to, for the message and its dashboard link. */
  subject: { type: 'account' | 'source' | 'agent' | 'signal' | 'server'; id: string; name?: string };
  /** The event's own facts (an error code, a symbol, a percentage…). */
  detail: Record<string, string | number | boolean | null>;
}

export interface NewNotification {
  channelId: string;
  accountId: string;
  event: NotificationEvent;
  /**
   * Events of one key on one channel are digested: while a message of that key waits, a new one
   * is counted into it (its first few kept as examples), and a new message of the key waits until
   * `digestWindowMs` after the previous one began. Null: every event is a message of its own.
   */
  digestKey: string | null;
  digestWindowMs: number;
}

/** A message claimed for sending: its events are the first examples of `count`. */
export interface OutboxMessage {
  id: number;
  channelId: string;
  accountId: string;
  kind: string;
  count: number;
  examples: NotificationEvent[];
  firstAt: string;
  lastAt: string;
  attempts: number;
}

export interface ClaimRequest {
  /** Who claims (an instance's id): only it may settle what it claimed. */
  owner: string;
  now: string;
  /** How long the claim holds; after it another instance may send the message again. */
  leaseMs: number;
  limit: number;
  /** No channel gets more than this many messages a minute. */
  perChannelPerMinute: number;
}

export type SendOutcome =
  { sent: true; at: string } | { sent: false; at: string; error: string; retryAt: string; giveUp: boolean };

/** How many examples a digested message keeps. */
export const DIGEST_EXAMPLES = 3;

/**
 * Notification channels and their durable outbox. A message is claimed (leased) by one instance
 * at a time, in order per channel: the oldest due message of a channel goes first, and the next
 * waits until it is settled, so a channel that is down receives its messages in order when it
 * is back.
 */
export interface Notifications {
  createChannel(channel: NotificationChannel): Promise<void>;
  /** An account's channels (or every account's), oldest first, with their secrets and state. */
  listChannels(accountId: string | null): Promise<ChannelWithState[]>;
  getChannel(id: string): Promise<ChannelWithState | null>;
  /** The changed channel, or null when there is none. Secrets given replace the stored ones key by key. */
  updateChannel(id: string, patch: ChannelPatch): Promise<ChannelWithState | null>;
  /** Deletes the channel and what waits for it; true when there was one. */
  deleteChannel(id: string): Promise<boolean>;

  /** Queues messages (digesting bursts, see `NewNotification`); durable when it resolves. */
  enqueue(items: NewNotification[], now: string): Promise<void>;
  /** Leases due messages: per channel only its oldest pending one, past its back-off and rate limit. */
  claim(request: ClaimRequest): Promise<OutboxMessage[]>;
  /** Records how sending went; false when the lease was no longer `owner`'s (nothing changed). */
  settle(id: number, owner: string, outcome: SendOutcome): Promise<boolean>;
  /** Messages of a channel, newest first (what the dashboard shows). */
  recent(channelId: string, limit: number): Promise<Array<OutboxMessage & { state: string; lastError: string | null }>>;
  /** Deletes sent and abandoned messages last touched before `before`; how many. */
  prune(before: string): Promise<number>;
}
