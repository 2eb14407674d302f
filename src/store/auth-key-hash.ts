import { createHash } from 'node:crypto';

/**
 * Sources are looked up by the SHA-256 hex of their auth key: the index compares fixed-length
 * digests, so how long a lookup takes says nothing about how close a guessed key came. The key
 * itself is never stored: whoever reads the store (a backup, a copy of the file) gets no
 * working inbound URL from it.
 */
export function authKeyHash(authKey: string): string {
  return createHash('sha256').update(authKey, 'utf8').digest('hex');
}

/** How many of a key's first characters are kept to tell it apart (24 of 192 bits). */
export const AUTH_KEY_HINT_LENGTH = 4;

/** What a source keeps of a new auth key: its digest, and its first characters as a hint. */
export function storedAuthKey(authKey: string): { authKeyHash: string; authKeyHint: string } {
  return { authKeyHash: authKeyHash(authKey), authKeyHint: authKey.slice(0, AUTH_KEY_HINT_LENGTH) };
}
