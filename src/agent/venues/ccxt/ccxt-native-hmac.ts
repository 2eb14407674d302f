import { createHmac } from 'node:crypto';
import type { Exchange } from 'ccxt';

/**
 * The NIST hash algorithm object identifiers (2.16.840.1.101.3.4.2.n, DER-encoded) that
 * `@noble/hashes` attaches to its SHA-2 functions (`oid`), and node:crypto's names for them.
 */
const NIST_HASH_OID = [0x06, 0x09, 0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02];
const NODE_NAMES: Record<number, { name: string; outputLen: number }> = {
  0x01: { name: 'sha256', outputLen: 32 },
  0x02: { name: 'sha384', outputLen: 48 },
  0x03: { name: 'sha512', outputLen: 64 },
};

/**
 * CCXT signs requests with `@noble/hashes`' HMAC, written in JavaScript: on the event loop that
 * also decides every other signal of a basket. Each exchange instance calls its own `hmac`
 * property (set in CCXT's constructor, same signature for every exchange); this one computes
 * SHA-256/384/512 HMACs with node:crypto (OpenSSL) and leaves any other hash and any other
 * digest to CCXT's. The result is the same bytes, in the same encoding.
 */
export function useNativeHmac(exchange: Exchange): void {
  const own = exchange.hmac;
  const native = (request: unknown, secret: unknown, hash: unknown, digest: unknown = 'hex'): unknown => {
    const algorithm = nodeAlgorithm(hash);
    const input = asBytes(request);
    const key = asBytes(secret);
    if (
      algorithm === null ||
      input === null ||
      key === null ||
      !(digest === 'hex' || digest === 'base64' || digest === 'binary')
    )
      return (own as (...args: unknown[]) => unknown)(request, secret, hash, digest);
    const mac = createHmac(algorithm, key).update(input);
    if (digest === 'binary') return new Uint8Array(mac.digest());
    return mac.digest(digest);
  };
  exchange.hmac = native as Exchange['hmac'];
}

/** node:crypto's name for a noble SHA-2 hash function, or null for any other. */
function nodeAlgorithm(hash: unknown): string | null {
  const { oid, outputLen } = (hash ?? {}) as { oid?: unknown; outputLen?: unknown };
  if (!(oid instanceof Uint8Array) || oid.length !== NIST_HASH_OID.length + 1) return null;
  for (let i = 0; i < NIST_HASH_OID.length; i += 1) if (oid[i] !== NIST_HASH_OID[i]) return null;
  const known = NODE_NAMES[oid[NIST_HASH_OID.length]!];
  return known !== undefined && known.outputLen === outputLen ? known.name : null;
}

/** CCXT hands strings (UTF-8 to noble and to node:crypto alike) or bytes. */
function asBytes(value: unknown): string | Uint8Array | null {
  return typeof value === 'string' || value instanceof Uint8Array ? value : null;
}
