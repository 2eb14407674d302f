import { pino, type Logger } from 'pino';
import { maskSecret } from '../security/secret-digest.js';

/**
 * Structured JSON lines on stdout. Keys, secrets and tokens never reach a log line: requests
 * are serialized as method and masked path only (no headers, no query), and no code logs a
 * record that holds a secret.
 */
export function createLogger(level: string): Logger {
  return pino({
    level,
    base: { service: 'signalgate' },
    timestamp: pino.stdTimeFunctions.isoTime,
    serializers: {
      req: (req: { method?: string; url?: string }) => ({ method: req.method, url: maskPath(req.url ?? '') }),
      res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
    },
  });
}

/** `/api/inbound/<key>` with all but the start of the key hidden. */
export function maskPath(url: string): string {
  const path = url.split('?')[0] ?? '';
  const match = /^(\/api\/inbound\/)([^/]+)(.*)$/.exec(path);
  return match ? `${match[1]}${maskSecret(decodeURIComponent(match[2]!))}${match[3]}` : path;
}
