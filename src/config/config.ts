import path from 'node:path';
import { parseDuration } from './duration.js';

/** Everything the service reads from its environment (CONTRACT §1). */
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
  const publicUrl = publicUrlFromEnv(env) ?? `http://${hostForUrl(host)}:${port}`;
  return {
    host,
    port,
    dataDir,
    databaseUrl,
    adminToken: nonEmpty(env.SIGNALGATE_ADMIN_TOKEN),
    publicUrl,
    logLevel: parseLogLevel(env.SIGNALGATE_LOG_LEVEL),
    retentionMs: parseRetention(env.SIGNALGATE_RETENTION),
  };
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
  if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search !== '' || url.hash !== '' || url.username !== '') {
    throw new ConfigError(
      `SIGNALGATE_PUBLIC_URL must be the http:// or https:// address senders reach this service at (like https://signals.example.com), without query or fragment, got '${raw}'`,
    );
  }
  return raw.replace(/\/+$/, '');
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
