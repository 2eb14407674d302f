import { pino, type Logger } from 'pino';
import { maskSecret } from '../security/secret-digest.js';
import { LineBatcher } from './line-batcher.js';

const BLOCK_BYTES = 8 * 1024;
const FLUSH_EVERY_MS = 50;

/**
 * Structured JSON lines on stdout. Keys, secrets and tokens never reach a log line: requests
 * are serialized as method and masked path only (no headers, no query), and no code logs a
 * record that holds a secret.
 */
export function createLogger(level: string, destination: pino.DestinationStream = standardOutput()): Logger {
  return pino(
    {
      level,
      base: { service: 'signalgate' },
      timestamp: isoTimeField,
      serializers: {
        req: (req: { method?: string; url?: string }) => ({ method: req.method, url: maskPath(req.url ?? '') }),
      },
    },
    destination,
  );
}

function standardOutput(): LineBatcher {
  // Written asynchronously and in blocks: under load the access log does not cost a write per
  // request, and a quiet server's lines still go out within FLUSH_EVERY_MS. A crash may lose
  // the last lines.
  return new LineBatcher(
    // minLength 1 writes each block at once, like 0, but keeps sonic-boom's flush waiting for
    // the write (with 0 it calls back at once).
    pino.destination({ dest: 1, sync: false, minLength: 1 }),
    BLOCK_BYTES,
    FLUSH_EVERY_MS,
  );
}

let fieldMillis = -1;
let field = '';

/** pino's ISO `time` field, formatted once per millisecond: under load many lines share one. */
function isoTimeField(): string {
  const now = Date.now();
  if (now !== fieldMillis) {
    fieldMillis = now;
    field = `,"time":"${new Date(now).toISOString()}"`;
  }
  return field;
}

/** Writes out what the logger still holds; call before the process exits. */
export function flushLogger(logger: Logger): Promise<void> {
  return new Promise((resolve) => logger.flush(() => resolve()));
}

/**
 * The inbound path of a source key as sent (percent-encoding and all), with all but the start
 * of the key hidden. Not decoded: a malformed encoding must not cost the log line.
 */
export function maskedInboundPath(key: string): string {
  return `/api/inbound/${maskSecret(key)}`;
}

/**
 * A request path without its query, with anything that may be a source key masked, and any
 * segment `isSecret` recognises (the admin token pasted into a URL, whatever its length).
 */
export function maskPath(url: string, isSecret: (segment: string) => boolean = () => false): string {
  const segments = (url.split('?')[0] ?? '').split('/');
  let afterInbound = false;
  return segments
    .map((segment) => {
      const masked = afterInbound
        ? maskSegment(segment)
        : mayBeKey(segment) || isSecret(segment)
          ? maskSecret(segment)
          : segment;
      // Mistyped inbound paths (`/api//inbound/…`, `/API/INBOUND/…`, `/inbound/x/../…`) carry keys too.
      if (readsInbound(segment)) afterInbound = true;
      return masked;
    })
    .join('/');
}

function maskSegment(segment: string): string {
  return segment === '' || segment === '.' || segment === '..' ? segment : maskSecret(segment);
}

function readsInbound(segment: string): boolean {
  if (segment.length < 7 || segment.length > 21) return false;
  try {
    return decodeURIComponent(segment).toLowerCase() === 'inbound';
  } catch {
    return false;
  }
}

/**
 * A source key pasted into some other path: long and from the key's alphabet. Record ids
 * (`acc_…`, `sig_…`) are lower-case and keep their place in the log.
 */
function mayBeKey(segment: string): boolean {
  return segment.length >= 24 && /^[A-Za-z0-9_%-]+$/.test(segment) && !/^[a-z]{3}_[0-9a-z]+$/.test(segment);
}
