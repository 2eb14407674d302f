import { ErrorCode, type Problem } from '../errors/catalog.js';
import { sendThrough, TransportError, type TransportOptions } from '../notifications/channel-transports.js';
import { recipients, SMTP_SECURITY } from '../notifications/email-transport.js';
import { CHOOSABLE_EVENTS, DEFAULT_EVENTS } from '../notifications/event-catalog.js';
import { notificationText } from '../notifications/notification-text.js';
import { objectSchema, type JsonSchema } from '../openapi/index.js';
import { newId } from '../security/random-secrets.js';
import type { ChannelKind, ChannelWithState, NotificationChannel } from '../store/notifications.js';
import type { Store } from '../store/store.js';
import { type AdminResult, notFound, refuse } from './admin-result.js';
import { FieldReader } from './field-reader.js';
import { booleanField, textField } from './field-schemas.js';
import { noFields } from './no-fields.js';

const KINDS: ChannelKind[] = ['webhook', 'telegram', 'discord', 'slack', 'email'];

/** Per kind: the settings shown, and the secrets kept but never shown again. */
const FIELDS_OF: Record<ChannelKind, { settings: string[]; secrets: string[]; optional: string[] }> = {
  webhook: { settings: [], secrets: ['url', 'signingSecret'], optional: ['signingSecret'] },
  telegram: { settings: ['chatId'], secrets: ['botToken'], optional: [] },
  discord: { settings: [], secrets: ['url'], optional: [] },
  slack: { settings: [], secrets: ['url'], optional: [] },
  email: {
    settings: ['host', 'port', 'security', 'username', 'from', 'to'],
    secrets: ['password'],
    optional: ['port', 'security', 'username', 'password'],
  },
};

const CHANNEL_FIELDS: Record<string, JsonSchema> = {
  name: textField(200, 'what the channel is called', 'desk phone'),
  events: {
    type: 'array',
    description: `the events this channel is told of (default: ${DEFAULT_EVENTS.length} events, every one but those off by default)`,
    items: { type: 'string', enum: CHOOSABLE_EVENTS },
    maxItems: CHOOSABLE_EVENTS.length,
  },
  enabled: booleanField('false: nothing is sent or queued for the channel'),
  url: textField(2000, 'webhook, Discord or Slack: the URL to POST to (a secret: never shown again)', 'https://…'),
  signingSecret: textField(200, 'webhook: the HMAC-SHA256 key of its X-Signature header (never shown again)', 's3cr3t'),
  botToken: textField(200, 'Telegram: the bot token from @BotFather (never shown again)', '123456:ABC…'),
  chatId: textField(100, 'Telegram: the chat the bot writes to', '123456789'),
  host: textField(200, 'e-mail: the SMTP server’s host name', 'smtp.example.com'),
  port: {
    type: 'integer',
    minimum: 1,
    maximum: 65535,
    description: 'e-mail: the SMTP port (default 587 for starttls, 465 for tls, 25 for none)',
    examples: [587],
  },
  security: {
    type: 'string',
    enum: SMTP_SECURITY,
    maxLength: 20,
    description:
      'e-mail: starttls (the default: STARTTLS required), tls (TLS from the start, port 465) or none (a local relay without a password)',
  },
  username: textField(
    200,
    'e-mail: the SMTP user (with a password; none for a relay that needs no login)',
    'me@example.com',
  ),
  password: textField(200, 'e-mail: the SMTP (app) password (never shown again)', 'app-password'),
  from: textField(200, 'e-mail: the sender address', 'signalgate@example.com'),
  to: textField(1000, 'e-mail: the addresses told, separated by commas', 'me@example.com, desk@example.com'),
};

/** The body of `POST /api/admin/accounts/{id}/channels`. */
export const CREATE_CHANNEL_BODY = objectSchema(
  {
    kind: { type: 'string', enum: KINDS, description: 'how the account is told' },
    ...CHANNEL_FIELDS,
  },
  ['kind', 'name'],
);

/** The body of `PATCH /api/admin/channels/{id}`: what is given changes (secrets too), the rest stays. */
export const UPDATE_CHANNEL_BODY = objectSchema(CHANNEL_FIELDS);

/** A channel as the API shows it: its settings and which secrets it has, never their values. */
export function channelView(channel: ChannelWithState) {
  return {
    id: channel.id,
    accountId: channel.accountId,
    kind: channel.kind,
    name: channel.name,
    events: channel.events,
    enabled: channel.enabled,
    settings: channel.settings,
    secretsSet: Object.keys(channel.secrets).sort(),
    state: channel.state,
    createdAt: channel.createdAt,
  };
}

export const CHANNEL_VIEW = objectSchema(
  {
    id: { type: 'string' },
    accountId: { type: 'string' },
    kind: { type: 'string', enum: KINDS },
    name: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    enabled: { type: 'boolean' },
    settings: {
      type: 'object',
      description: 'what is not secret: a chat id; an SMTP host, port, security, user and addresses',
    },
    secretsSet: {
      type: 'array',
      items: { type: 'string' },
      description: 'which secrets are kept (never their values)',
    },
    state: {
      type: 'object',
      description:
        'failures in a row, failingSince, lastError, retryAt (the back-off), lastSentAt, pending (messages waiting)',
    },
    createdAt: { type: 'string', format: 'date-time' },
  },
  ['id', 'accountId', 'kind', 'name', 'events', 'enabled', 'settings', 'secretsSet', 'state', 'createdAt'],
);

interface ReadFields {
  name?: string;
  events?: string[];
  enabled?: boolean;
  values: Record<string, string | number>;
}

function readCommon(fields: FieldReader, kind: ChannelKind | null): ReadFields {
  const read: ReadFields = { values: {} };
  const name = fields.string('name');
  if (typeof name === 'string') read.name = name.trim();
  const events = fields.given('events');
  if (events !== undefined) {
    if (!Array.isArray(events) || !events.every((e) => typeof e === 'string')) {
      fields.fail('events', "'events' must be a list of event names");
    } else {
      const unknown = events.filter((e) => !(CHOOSABLE_EVENTS as string[]).includes(e));
      if (unknown.length > 0) {
        fields.fail('events', `unknown event ${unknown.join(', ')}; the events are ${CHOOSABLE_EVENTS.join(', ')}`);
      } else read.events = [...new Set(events as string[])];
    }
  }
  const enabled = fields.boolean('enabled');
  if (enabled !== undefined) read.enabled = enabled;
  const allowed = kind === null ? null : [...FIELDS_OF[kind].settings, ...FIELDS_OF[kind].secrets];
  for (const field of [
    'url',
    'signingSecret',
    'botToken',
    'chatId',
    'host',
    'security',
    'username',
    'password',
    'from',
    'to',
  ]) {
    const value = fields.string(field);
    if (typeof value !== 'string') continue;
    if (allowed !== null && !allowed.includes(field)) {
      fields.fail(field, `'${field}' is not a field of a ${kind} channel (those are ${allowed.join(', ')})`);
      continue;
    }
    if (field === 'url' && !/^https?:\/\/[^\s]+$/i.test(value)) {
      fields.fail(field, "'url' must be an http:// or https:// URL");
      continue;
    }
    read.values[field] = value.trim();
  }
  const security = read.values.security;
  if (security !== undefined && !(SMTP_SECURITY as unknown[]).includes(security)) {
    fields.fail('security', `'security' must be one of ${SMTP_SECURITY.join(', ')}`);
  }
  const port = fields.integer('port');
  if (port !== undefined) {
    if (allowed !== null && !allowed.includes('port'))
      fields.fail('port', `'port' is not a field of a ${kind} channel`);
    else read.values.port = port;
  }
  return read;
}

const ADDRESS = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/;

/** An e-mail channel's settings taken together: addresses, host, and a login only over TLS. */
function emailProblems(fields: FieldReader, values: Record<string, string | number>): void {
  const { host, from, to, username, password, security } = values;
  if (typeof host === 'string' && !/^[A-Za-z0-9.-]+$|^\[[0-9A-Fa-f:.]+\]$/.test(host)) {
    fields.fail('host', "'host' must be a host name or an IP address, without scheme or port (the port is 'port')");
  }
  if (typeof from === 'string' && !ADDRESS.test(from))
    fields.fail('from', `'from' must be an e-mail address, got '${from}'`);
  if (typeof to === 'string') {
    const list = recipients(to);
    const bad = list.filter((a) => !ADDRESS.test(a));
    if (list.length === 0 || bad.length > 0) {
      fields.fail(
        'to',
        `'to' must be e-mail addresses separated by commas${bad.length ? `; not one: '${bad[0]}'` : ''}`,
      );
    } else if (list.length > 20) fields.fail('to', `'to' names at most 20 addresses, got ${list.length}`);
  }
  const hasUser = username !== undefined && username !== '';
  const hasPassword = password !== undefined && password !== '';
  if (hasUser && !hasPassword) fields.fail('password', "an e-mail channel with a 'username' needs its 'password'");
  if (hasPassword && !hasUser) fields.fail('username', "an e-mail channel with a 'password' needs its 'username'");
  if (security === 'none' && hasPassword) {
    fields.fail(
      'security',
      "'security: none' would send the password in clear; use starttls (port 587) or tls (port 465), or a relay without a login",
    );
  }
}

function split(kind: ChannelKind, values: Record<string, string | number>) {
  const settings: Record<string, string | number> = {};
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (FIELDS_OF[kind].secrets.includes(name)) secrets[name] = String(value);
    else settings[name] = value;
  }
  return { settings, secrets };
}

/** Creates a channel of the account; its secrets are kept and never shown, not even in this answer. */
export async function createChannel(
  store: Store,
  accountId: string,
  body: unknown,
  nowMillis: number,
): Promise<AdminResult<ReturnType<typeof channelView>>> {
  const fields = new FieldReader(body, CREATE_CHANNEL_BODY);
  const kindValue = fields.given('kind');
  let kind: ChannelKind | null = null;
  if (kindValue === undefined) fields.fail('kind', `'kind' is required: one of ${KINDS.join(', ')}`);
  else if (!KINDS.includes(kindValue as ChannelKind)) fields.fail('kind', `'kind' must be one of ${KINDS.join(', ')}`);
  else kind = kindValue as ChannelKind;
  const read = readCommon(fields, kind);
  if (fields.given('name') === undefined) fields.fail('name', "'name' is required");
  fields.rejectUnknown();
  if (kind !== null && fields.problems.length === 0) {
    for (const field of [...FIELDS_OF[kind].settings, ...FIELDS_OF[kind].secrets]) {
      if (FIELDS_OF[kind].optional.includes(field) || read.values[field] !== undefined) continue;
      fields.fail(field, `a ${kind} channel needs '${field}'`);
    }
  }
  if (kind === 'email' && fields.problems.length === 0) emailProblems(fields, read.values);
  if (fields.problems.length > 0 || kind === null || read.name === undefined) return refuse(...fields.problems);
  if ((await store.accounts.get(accountId)) === null) return notFound('account', accountId);
  const { settings, secrets } = split(kind, read.values);
  const channel: NotificationChannel = {
    id: newId('nch'),
    accountId,
    kind,
    name: read.name,
    settings,
    secrets,
    events: read.events ?? [...DEFAULT_EVENTS],
    enabled: read.enabled ?? true,
    createdAt: new Date(nowMillis).toISOString(),
  };
  await store.notifications.createChannel(channel);
  return showChannel(store, channel.id);
}

export async function showChannel(store: Store, id: string): Promise<AdminResult<ReturnType<typeof channelView>>> {
  const channel = await store.notifications.getChannel(id);
  return channel === null ? notFound('channel', id) : { ok: true, value: channelView(channel) };
}

/** `GET /api/admin/channels?accountId=`: the channels of an account (or all), oldest first. */
export async function listChannels(
  store: Store,
  query: Record<string, unknown>,
): Promise<AdminResult<{ channels: Array<ReturnType<typeof channelView>> }>> {
  const problems: Problem[] = [];
  for (const name of Object.keys(query)) {
    if (name !== 'accountId')
      problems.push({
        code: ErrorCode.INVALID_REQUEST,
        param: name,
        detail: `unknown query parameter '${name}'; the one known is accountId`,
      });
  }
  if (problems.length > 0) return refuse(...problems);
  const accountId = typeof query.accountId === 'string' && query.accountId !== '' ? query.accountId : null;
  const channels = await store.notifications.listChannels(accountId);
  return { ok: true, value: { channels: channels.map(channelView) } };
}

export async function updateChannel(
  store: Store,
  id: string,
  body: unknown,
): Promise<AdminResult<ReturnType<typeof channelView>>> {
  const current = await store.notifications.getChannel(id);
  const fields = new FieldReader(body, UPDATE_CHANNEL_BODY);
  const read = readCommon(fields, current?.kind ?? null);
  fields.rejectUnknown();
  if (current?.kind === 'email' && fields.problems.length === 0) {
    // Checked as the channel will be: what is kept, with what is given over it.
    emailProblems(fields, { ...current.settings, ...current.secrets, ...read.values } as Record<
      string,
      string | number
    >);
  }
  if (fields.problems.length > 0) return refuse(...fields.problems);
  if (current === null) return notFound('channel', id);
  const { settings, secrets } = split(current.kind, read.values);
  const changed = await store.notifications.updateChannel(id, {
    ...(read.name !== undefined && { name: read.name }),
    ...(read.events !== undefined && { events: read.events }),
    ...(read.enabled !== undefined && { enabled: read.enabled }),
    ...(Object.keys(settings).length > 0 && { settings: { ...current.settings, ...settings } }),
    ...(Object.keys(secrets).length > 0 && { secrets }),
  });
  return changed === null ? notFound('channel', id) : { ok: true, value: channelView(changed) };
}

export async function deleteChannel(store: Store, id: string): Promise<AdminResult<null>> {
  return (await store.notifications.deleteChannel(id)) ? { ok: true, value: null } : notFound('channel', id);
}

/** What the channel sent lately (newest first), for the dashboard. */
export async function channelMessages(store: Store, id: string) {
  if ((await store.notifications.getChannel(id)) === null) return notFound('channel', id);
  const messages = await store.notifications.recent(id, 20);
  return {
    ok: true as const,
    value: {
      messages: messages.map((m) => ({
        id: m.id,
        event: m.kind,
        count: m.count,
        state: m.state,
        attempts: m.attempts,
        lastError: m.lastError,
        firstAt: m.firstAt,
        lastAt: m.lastAt,
      })),
    },
  };
}

/**
 * Sends a test message through the channel now, past the outbox: the answer says whether the
 * receiver took it, and if not, what it said (never a secret of the channel).
 */
export async function testChannel(
  store: Store,
  id: string,
  body: unknown,
  options: { transport: TransportOptions; dashboardUrl: string; nowMillis: number },
): Promise<AdminResult<{ sent: boolean; error: string | null }>> {
  const problems = noFields(body, 'a test');
  if (problems.length > 0) return refuse(...problems);
  const channel = await store.notifications.getChannel(id);
  if (channel === null) return notFound('channel', id);
  const at = new Date(options.nowMillis).toISOString();
  const text = notificationText(
    {
      id: 0,
      channelId: channel.id,
      accountId: channel.accountId,
      kind: 'test',
      count: 1,
      examples: [
        { kind: 'test', at, subject: { type: 'account', id: channel.accountId }, detail: { channel: channel.name } },
      ],
      firstAt: at,
      lastAt: at,
      attempts: 0,
    },
    options.dashboardUrl,
  );
  try {
    await sendThrough(channel, text, 0, options.transport);
    return { ok: true, value: { sent: true, error: null } };
  } catch (error) {
    if (!(error instanceof TransportError)) throw error;
    return { ok: true, value: { sent: false, error: error.message } };
  }
}
