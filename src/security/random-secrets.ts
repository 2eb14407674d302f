import { randomBytes } from 'node:crypto';

/** A source auth key: 192 random bits, URL-safe, so it can stand as the last path segment. */
export function newAuthKey(): string {
  return randomBytes(24).toString('base64url');
}

/** An agent token; the prefix makes a leaked one recognisable in a scan. */
export function newAgentToken(): string {
  return `sga_${randomBytes(32).toString('base64url')}`;
}

export function newAdminToken(): string {
  return `sgadm_${randomBytes(32).toString('base64url')}`;
}

/** A random id with a type prefix (`acc_…`, `src_…`, `agt_…`). */
export function newId(prefix: string): string {
  return `${prefix}_${randomBytes(10).toString('hex')}`;
}
