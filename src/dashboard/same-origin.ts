import type { FastifyRequest } from 'fastify';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Whether a request that a browser's session cookie authenticates may change state: its Origin
 * header must name the host it was sent to, or the public URL's origin (a reverse proxy may pass
 * on another Host). The SameSite=Strict cookie already stays home on cross-site requests; this
 * also refuses a same-site but cross-origin page (another port or subdomain) and a browser that
 * ignores SameSite. Reading (GET) changes nothing and needs no origin.
 */
export function sameOriginOrSafe(request: FastifyRequest, publicUrl: string): boolean {
  if (SAFE_METHODS.has(request.method)) return true;
  const origin = request.headers.origin;
  if (typeof origin !== 'string') return false;
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') return false;
  const host = request.headers.host;
  if (typeof host === 'string' && parsed.host === host.toLowerCase()) return true;
  try {
    return parsed.origin === new URL(publicUrl).origin;
  } catch {
    return false;
  }
}
