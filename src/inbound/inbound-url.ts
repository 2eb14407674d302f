const INBOUND_PREFIX = '/api/inbound/';

/**
 * The source key of a `POST /api/inbound/{sourceAuthKey}` request, or null when the request is
 * anything else (other methods, other paths, an empty key or extra path segments), which the
 * router answers as before.
 */
export function inboundKeyOf(method: string | undefined, url: string | undefined): string | null {
  return method === 'POST' ? inboundKeyInPath(url) : null;
}

/** The source key when `url` is an inbound URL (`/api/inbound/{sourceAuthKey}`), whatever the method. */
export function inboundKeyInPath(url: string | undefined): string | null {
  if (url === undefined || !url.startsWith(INBOUND_PREFIX)) return null;
  const queryAt = url.indexOf('?', INBOUND_PREFIX.length);
  const key = url.slice(INBOUND_PREFIX.length, queryAt === -1 ? undefined : queryAt);
  if (key.length === 0 || key.includes('/')) return null;
  return key;
}

/** A key that is not valid percent-encoding cannot belong to any source; it is looked up as sent. */
export function decodedKey(encoded: string): string {
  if (!encoded.includes('%')) return encoded;
  try {
    return decodeURIComponent(encoded);
  } catch {
    return encoded;
  }
}
