import { pino, type Logger } from 'pino';
import { maskSecret } from '../security/secret-digest.js';

/**
 * Structured JSON lines on stdout. Keys, secrets and tokens never reach a log line: requests
 * are serialized as method and masked path only (no headers, no query), and no code logs a
 * record that holds a secret.
 */
export function createLogger(level: string): Logger {
  // Written asynchronously: lines that arrive while a write is in flight go out together, so
  // the access log does not cost one write syscall per request. A crash may lose the last lines.
  const destination = pino.destination({ dest: 1, sync: false });
  return pino({
    level,
    base: { service: 'signalgate' },
    timestamp: isoTimeField,
    serializers: {
      req: (req: { method?: string; url?: string }) => ({ method: req.method, url: maskPath(req.url ?? '') }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
  }, destination);
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

/** The inbound path of a source key, with all but the start of the key hidden. */
export function maskedInboundPath(key: string): string {
  return `/api/inbound/${maskSecret(key)}`;
}

/** `/api/inbound/<key>` with all but the start of the key hidden. */
export function maskPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  const match = /^(\/api\/inbound\/)([^/]+)(.*)$/.exec(path);
  return match ? `${match[1]}${maskSecret(decodeURIComponent(match[2]!))}${match[3]}` : path;
}
