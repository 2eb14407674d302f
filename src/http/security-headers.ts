import type { ServerResponse } from 'node:http';

/** How long a browser keeps to HTTPS once told (a year, what HSTS preload lists ask for). */
export const HSTS_MAX_AGE_SECONDS = 365 * 86_400;

/**
 * The headers every answer carries, the inbound path's, the API's and the event stream's alike:
 * nothing is to be sniffed as another type, framed or shown another site's referrer. The
 * dashboard's routes replace the Content-Security-Policy with the one its page needs. With HTTPS
 * served here, HSTS tells browsers to come back only over HTTPS (behind a reverse proxy that
 * ends TLS, the proxy sets it: docs/operations.md).
 */
export function securityHeaders(https: boolean): ReadonlyArray<readonly [string, string]> {
  const headers: Array<readonly [string, string]> = [
    ['x-content-type-options', 'nosniff'],
    ['x-frame-options', 'DENY'],
    ['referrer-policy', 'no-referrer'],
    ['cross-origin-resource-policy', 'same-origin'],
    ['content-security-policy', "default-src 'none'; frame-ancestors 'none'"],
  ];
  if (https) headers.push(['strict-transport-security', `max-age=${HSTS_MAX_AGE_SECONDS}`]);
  return headers;
}

/**
 * Sets them on the response before anything answers it: headers set this way are merged into
 * whatever `writeHead` sends later, so hijacked answers (the event stream) and the inbound
 * handler's own get them too, and a route may still replace one.
 */
export function applySecurityHeaders(res: ServerResponse, headers: ReadonlyArray<readonly [string, string]>): void {
  for (const [name, value] of headers) res.setHeader(name, value);
}
