import { createHmac, timingSafeEqual } from 'node:crypto';
import { secretsEqual } from '../security/secret-digest.js';

export interface SignatureHeaders {
  /** `X-Signature: sha256=<hex>` over the exact raw body. */
  signature: string | undefined;
  /** `X-Signalgate-Secret: <secret>`, the plain shared-secret alternative. */
  secret: string | undefined;
  /** Whether the retired `?secret=` query parameter was sent. */
  querySecret: boolean;
}

export type SignatureCheck = { ok: true } | { ok: false; detail: string; param: string };

const SIGNATURE_FORM = /^sha256=([0-9a-fA-F]{64})$/;

/**
 * Checks a request against the source's HMAC secret. X-Signature is preferred: when it is
 * present it alone decides, so a wrong signature is never rescued by another header.
 */
export function verifySignature(secret: string, rawBody: Buffer, headers: SignatureHeaders): SignatureCheck {
  if (headers.signature !== undefined) {
    const match = SIGNATURE_FORM.exec(headers.signature.trim());
    if (match === null) {
      return {
        ok: false,
        param: 'X-Signature',
        detail: "X-Signature must be 'sha256=' followed by the 64 hex digits of HMAC-SHA256(secret, raw body)",
      };
    }
    const given = Buffer.from(match[1]!, 'hex');
    const expected = createHmac('sha256', secret).update(rawBody).digest();
    if (!timingSafeEqual(given, expected)) {
      return {
        ok: false,
        param: 'X-Signature',
        detail:
          'X-Signature does not match; compute HMAC-SHA256 with the source secret over the exact bytes sent (no re-serialisation)',
      };
    }
    return { ok: true };
  }
  if (headers.secret !== undefined) {
    if (!secretsEqual(headers.secret, secret)) {
      return { ok: false, param: 'X-Signalgate-Secret', detail: "X-Signalgate-Secret does not match the source's secret" };
    }
    return { ok: true };
  }
  if (headers.querySecret) {
    return {
      ok: false,
      param: 'secret',
      detail:
        "the 'secret' query parameter is retired and never authenticates; send the signature in the X-Signature header (sha256=<hex>) or the secret in the X-Signalgate-Secret header",
    };
  }
  return {
    ok: false,
    param: 'X-Signature',
    detail: 'this source requires a signature; send X-Signature: sha256=<hex of HMAC-SHA256(secret, raw body)>',
  };
}
