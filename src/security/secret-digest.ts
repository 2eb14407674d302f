import { createHash, timingSafeEqual } from 'node:crypto';

/** SHA-256 hex of a token: what the store keeps instead of the token itself. */
export function digestToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

/** Compares two secrets in time independent of where they differ (and of their lengths). */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

/** Shows enough of a key or token to tell which one it is in a log, never the whole. */
export function maskSecret(secret: string): string {
  return secret.length <= 8 ? '****' : `${secret.slice(0, 4)}…`;
}
