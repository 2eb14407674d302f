import { createHash } from 'node:crypto';

/**
 * Sources are looked up by the SHA-256 hex of their auth key: the index compares fixed-length
 * digests, so how long a lookup takes says nothing about how close a guessed key came.
 */
export function authKeyHash(authKey: string): string {
  return createHash('sha256').update(authKey, 'utf8').digest('hex');
}
