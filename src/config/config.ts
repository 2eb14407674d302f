import path from 'node:path';
import { addressEntryProblem } from '../security/address-list.js';
import { weakTokenProblem } from '../security/token-strength.js';
import { parseDuration } from './duration.js';

/** Everything the service reads from its environment (docs/operations.md, "Settings"). */
export interface Config {
  host: string;
  port: number;
  dataDir: string;
  /** PostgreSQL store when set; the embedded SQLite store otherwise. */
  databaseUrl: string | null;
  /** The admin bearer token from the environment; null means "generate one on first start". */
  adminToken: string | null;
  publicUrl: string;
  logLevel: string;
  /** SIGNALGATE_RETENTION: how long signal records are kept, in milliseconds. */
  retentionMs: number;
  /** SIGNALGATE_TLS_CERT and SIGNALGATE_TLS_KEY: HTTPS on PORT when set; plain HTTP when null. */
  tls: TlsFiles | null;
  /**
   * SIGNALGATE_TRUST_PROXY: addresses and CIDR ranges of the reverse proxies whose
   * X-Forwarded-For is believed; empty means the socket's address is the client's.
   */
  trustProxy: string[];
  /** SIGNALGATE_METRICS_TOKEN: reads `GET /metrics` (as the admin token does) and nothing else. */
  metricsToken?: string | null;
  /**
   * SIGNALGATE_INBOUND_THREAD: whether the embedded store checks and commits inbound signals on a
   * thread of their own (`on`), on the event loop (`off`), or by the CPUs the process may use
   * (`auto`, the default: the thread only with more than one). PostgreSQL ignores it.
   */
  inboundThread?: InboundThreadSetting;
  /** Notifications (docs/notifications.md); absent in configs made by hand: the defaults. */
  notifications?: NotificationSettings;
}

export interface NotificationSettings {
  /** SIGNALGATE_TELEGRAM_API_URL: the Telegram Bot API's base URL. */
  telegramApiUrl: string;
  /** SIGNALGATE_NOTIFY_PER_MINUTE: no channel receives more messages a minute. */
  perChannelPerMinute: number;
  /** SIGNALGATE_NOTIFY_AGENT_OFFLINE: an agent gone this long is reported disconnected. */
  agentOfflineMs: number;
  /** SIGNALGATE_NOTIFY_RETRY: a failing channel is retried after the first, doubling up to the longest. */
  retry?: RetrySchedule;
}

export interface RetrySchedule {
  firstMs: number;
  maxMs: number;
}

export const DEFAULT_RETRY: RetrySchedule = { firstMs: 5_000, maxMs: 10 * 60_000 };

export const DEFAULT_NOTIFICATION_SETTINGS: NotificationSettings = {
  telegramApiUrl: 'https://api.telegram.org',
  perChannelPerMinute: 20,
  agentOfflineMs: 120_000,
};

/** The same values as the store's setting of that name (config does not import the store). */
export type InboundThreadSetting = 'auto' | 'on' | 'off';

/** The PEM files HTTPS is served with, read at start and again on SIGHUP. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export class ConfigError extends Error {}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const host = nonEmpty(env.HOST) ?? '127.0.0.1';
  const port = parsePort(env.PORT);
  const dataDir = path.resolve(nonEmpty(env.SIGNALGATE_DATA_DIR) ?? './data');
  const databaseUrl = nonEmpty(env.SIGNALGATE_DATABASE_URL);
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//i.test(databaseUrl)) {
    throw new ConfigError(
      `SIGNALGATE_DATABASE_URL must be a postgres:// or postgresql:// URL; unset it to use the embedded SQLite store`,
    );
  }
  const tls = tlsFilesFromEnv(env);
  const publicUrl = publicUrlFromEnv(env) ?? `${tls === null ? 'http' : 'https'}://${hostForUrl(host)}:${port}`;
  return {
    host,
    port,
    dataDir,
    databaseUrl,
    adminToken: strongToken('SIGNALGATE_ADMIN_TOKEN', env.SIGNALGATE_ADMIN_TOKEN),
    publicUrl,
    logLevel: parseLogLevel(env.SIGNALGATE_LOG_LEVEL),
    retentionMs: parseRetention(env.SIGNALGATE_RETENTION),
    tls,
    trustProxy: parseTrustProxy(env.SIGNALGATE_TRUST_PROXY),
    metricsToken: strongToken('SIGNALGATE_METRICS_TOKEN', env.SIGNALGATE_METRICS_TOKEN),
    inboundThread: parseInboundThread(env.SIGNALGATE_INBOUND_THREAD),
    notifications: notificationSettings(env),
  };
}

function notificationSettings(env: NodeJS.ProcessEnv): NotificationSettings {
  const telegramApiUrl = nonEmpty(env.SIGNALGATE_TELEGRAM_API_URL) ?? DEFAULT_NOTIFICATION_SETTINGS.telegramApiUrl;
  if (!/^https?:\/\//i.test(telegramApiUrl)) {
    throw new ConfigError(`SIGNALGATE_TELEGRAM_API_URL must be an http:// or https:// URL, got '${telegramApiUrl}'`);
  }
  const perMinuteRaw = nonEmpty(env.SIGNALGATE_NOTIFY_PER_MINUTE);
  const perChannelPerMinute =
    perMinuteRaw === null ? DEFAULT_NOTIFICATION_SETTINGS.perChannelPerMinute : Number(perMinuteRaw);
  if (!Number.isInteger(perChannelPerMinute) || perChannelPerMinute < 1 || perChannelPerMinute > 600) {
    throw new ConfigError(`SIGNALGATE_NOTIFY_PER_MINUTE must be a whole number from 1 to 600, got '${perMinuteRaw}'`);
  }
  const offlineRaw = nonEmpty(env.SIGNALGATE_NOTIFY_AGENT_OFFLINE);
  const agentOfflineMs = offlineRaw === null ? DEFAULT_NOTIFICATION_SETTINGS.agentOfflineMs : parseDuration(offlineRaw);
  if (agentOfflineMs === null) {
    throw new ConfigError(
      `SIGNALGATE_NOTIFY_AGENT_OFFLINE must be a duration like 2m or 30s (a whole number above 0 and one unit), got '${offlineRaw}'`,
    );
  }
  return { telegramApiUrl, perChannelPerMinute, agentOfflineMs, retry: retrySchedule(env.SIGNALGATE_NOTIFY_RETRY) };
}

/** `first,longest`, e.g. `5s,10m` (the default); `ms` is allowed for tests' short schedules. */
function retrySchedule(value: string | undefined): RetrySchedule {
  const raw = nonEmpty(value);
  if (raw === null) return DEFAULT_RETRY;
  const one = (part: string) => {
    const ms = /^(\d+)ms$/.exec(part.trim());
    return ms ? (Number(ms[1]) > 0 ? Number(ms[1]) : null) : parseDuration(part);
  };
  const parts = raw.split(',');
  const firstMs = parts.length === 2 ? one(parts[0]!) : null;
  const maxMs = parts.length === 2 ? one(parts[1]!) : null;
  if (firstMs === null || maxMs === null || maxMs < firstMs || maxMs > 86_400_000) {
    throw new ConfigError(
      `SIGNALGATE_NOTIFY_RETRY must be the first delay and the longest, like 5s,10m (each a whole number and one unit of ms, s, m or h; the longest at least the first and at most 1d), got '${raw}'`,
    );
  }
  return { firstMs, maxMs };
}

const INBOUND_THREAD_SETTINGS: InboundThreadSetting[] = ['auto', 'on', 'off'];

function parseInboundThread(value: string | undefined): InboundThreadSetting {
  const setting = (nonEmpty(value) ?? 'auto').toLowerCase();
  if (!INBOUND_THREAD_SETTINGS.includes(setting as InboundThreadSetting)) {
    throw new ConfigError(
      `SIGNALGATE_INBOUND_THREAD must be auto (a thread of its own only with more than one CPU), on or off, got '${value}'; leave it unset for auto`,
    );
  }
  return setting as InboundThreadSetting;
}

function tlsFilesFromEnv(env: NodeJS.ProcessEnv): TlsFiles | null {
  const certFile = nonEmpty(env.SIGNALGATE_TLS_CERT);
  const keyFile = nonEmpty(env.SIGNALGATE_TLS_KEY);
  if (certFile === null && keyFile === null) return null;
  if (certFile === null || keyFile === null) {
    const [missing, given] =
      certFile === null ? ['SIGNALGATE_TLS_CERT', 'SIGNALGATE_TLS_KEY'] : ['SIGNALGATE_TLS_KEY', 'SIGNALGATE_TLS_CERT'];
    throw new ConfigError(
      `${given} is set but ${missing} is not; set both (PEM certificate and private key files) to serve HTTPS, or neither for plain HTTP`,
    );
  }
  return { certFile: path.resolve(certFile), keyFile: path.resolve(keyFile) };
}

function parseTrustProxy(value: string | undefined): string[] {
  const raw = nonEmpty(value);
  if (raw === null) return [];
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const problem = entry === '' ? 'an entry is empty' : addressEntryProblem(entry);
    if (problem !== null) {
      throw new ConfigError(
        `SIGNALGATE_TRUST_PROXY: ${problem}; give the comma-separated addresses or CIDR ranges of your reverse proxies, like 127.0.0.1,10.0.0.0/8`,
      );
    }
  }
  return entries;
}

function parseRetention(value: string | undefined): number {
  const raw = nonEmpty(value) ?? '90d';
  const ms = parseDuration(raw);
  if (ms === null) {
    throw new ConfigError(
      `SIGNALGATE_RETENTION must be a duration like 90d, 12h, 30m or 45s (a whole number above 0 and one unit: s, m, h or d), got '${raw}'`,
    );
  }
  return ms;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function parseLogLevel(value: string | undefined): string {
  const level = nonEmpty(value) ?? 'info';
  if (!LOG_LEVELS.includes(level)) {
    throw new ConfigError(`SIGNALGATE_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got '${level}'`);
  }
  return level;
}

/**
 * SIGNALGATE_PUBLIC_URL without trailing slashes; null when the operator did not set it. It is
 * what senders are told to post to, so anything but a plain http(s) base URL is refused.
 */
export function publicUrlFromEnv(env: NodeJS.ProcessEnv = process.env): string | null {
  const raw = nonEmpty(env.SIGNALGATE_PUBLIC_URL);
  if (raw === null) return null;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (
    url === null ||
    (url.protocol !== 'http:' && url.protocol !== 'https:') ||
    url.search !== '' ||
    url.hash !== '' ||
    url.username !== ''
  ) {
    throw new ConfigError(
      `SIGNALGATE_PUBLIC_URL must be the http:// or https:// address senders reach this service at (like https://signals.example.com), without query or fragment, got '${raw}'`,
    );
  }
  return raw.replace(/\/+$/, '');
}

/** A bearer token setting: unset, or strong enough that guessing it is hopeless (docs/operations.md). */
function strongToken(setting: string, value: string | undefined): string | null {
  const token = nonEmpty(value);
  if (token === null) return null;
  const problem = weakTokenProblem(setting, token);
  if (problem !== null) throw new ConfigError(problem);
  return token;
}

function nonEmpty(value: string | undefined): string | null {
  const trimmed = value?.trim();
  return trimmed ? trimmed : null;
}

function parsePort(value: string | undefined): number {
  const raw = nonEmpty(value);
  if (raw === null) return 8080;
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port > 65535) {
    throw new ConfigError(`PORT must be a whole number from 0 to 65535, got '${raw}'`);
  }
  return port;
}

function hostForUrl(host: string): string {
  return host.includes(':') ? `[${host}]` : host;
}
