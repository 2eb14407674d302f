import { createHmac, timingSafeEqual } from 'node:crypto';
import { ErrorCode } from '../errors/catalog.js';
import { secretsEqual } from '../security/secret-digest.js';

export interface SignatureHeaders {
  /** `X-Signature: sha256=<hex>` over the exact raw body, or over `<timestamp>.<raw body>`. */
  signature: string | undefined;
  /** `X-Signature-Timestamp: <unix seconds>`, the optional signed time that stops a replay later on. */
  timestamp?: string | undefined;
  /** `X-Signalgate-Secret: <secret>`, the plain shared-secret alternative. */
  secret: string | undefined;
  /** Whether the retired `?secret=` query parameter was sent. */
  querySecret: boolean;
}

export type SignatureCheck =
  | { ok: true }
  | {
      ok: false;
      code: typeof ErrorCode.HMAC_MISMATCH | typeof ErrorCode.SIGNATURE_TIMESTAMP_OUT_OF_RANGE;
      detail: string;
      param: string;
    };

/** How far a signed timestamp may be from the server's clock, either way. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

const SIGNATURE_FORM = /^sha256=([0-9a-fA-F]{64})$/;
const TIMESTAMP_FORM = /^[0-9]{1,12}$/;
const DOT = Buffer.from('.');

/**
 * Checks a request against the source's HMAC secret. X-Signature is preferred: when it is
 * present it alone decides, so a wrong signature is never rescued by another header. With
 * X-Signature-Timestamp the signature covers the timestamp too, and a request signed more than
 * SIGNATURE_TOLERANCE_SECONDS away from `nowMillis` is refused, so a captured request cannot be
 * sent again later; the range is judged only once the signature fits, so a sender is never told
 * about the clock of a request it did not sign.
 */
export function verifySignature(
  secret: string,
  rawBody: Buffer,
  headers: SignatureHeaders,
  nowMillis: number,
): SignatureCheck {
  const timestamp = headers.timestamp?.trim();
  if (headers.signature !== undefined) {
    const match = SIGNATURE_FORM.exec(headers.signature.trim());
    if (match === null) {
      return mismatch(
        'X-Signature',
        "X-Signature must be 'sha256=' followed by the 64 hex digits of HMAC-SHA256(secret, raw body), or of HMAC-SHA256(secret, timestamp + '.' + raw body) with X-Signature-Timestamp",
      );
    }
    if (timestamp !== undefined && !TIMESTAMP_FORM.test(timestamp)) {
      return mismatch(
        'X-Signature-Timestamp',
        'X-Signature-Timestamp must be the signing time in whole unix seconds (1 to 12 digits), e.g. the output of date +%s',
      );
    }
    const given = Buffer.from(match[1]!, 'hex');
    const hmac = createHmac('sha256', secret);
    if (timestamp !== undefined) hmac.update(timestamp).update(DOT);
    const expected = hmac.update(rawBody).digest();
    if (!timingSafeEqual(given, expected)) {
      return mismatch(
        'X-Signature',
        timestamp === undefined
          ? 'X-Signature does not match; compute HMAC-SHA256 with the source secret over the exact bytes sent (no re-serialisation)'
          : "X-Signature does not match; with X-Signature-Timestamp, compute HMAC-SHA256 with the source secret over the timestamp exactly as sent, a '.', and the exact bytes of the body",
      );
    }
    if (timestamp !== undefined) {
      const offsetSeconds = Number(timestamp) - Math.floor(nowMillis / 1000);
      if (Math.abs(offsetSeconds) > SIGNATURE_TOLERANCE_SECONDS) {
        const where = offsetSeconds < 0 ? `${-offsetSeconds} s before` : `${offsetSeconds} s after`;
        return {
          ok: false,
          code: ErrorCode.SIGNATURE_TIMESTAMP_OUT_OF_RANGE,
          param: 'X-Signature-Timestamp',
          detail: `X-Signature-Timestamp ${timestamp} is ${where} the server's time (${Math.floor(nowMillis / 1000)}); a signed request is taken only within ${SIGNATURE_TOLERANCE_SECONDS} s of it, so sign each request when it is sent and keep the sender's clock synchronised (NTP)`,
        };
      }
    }
    return { ok: true };
  }
  if (headers.secret !== undefined) {
    if (timestamp !== undefined) {
      return mismatch(
        'X-Signature-Timestamp',
        'X-Signature-Timestamp counts only as part of X-Signature, and X-Signalgate-Secret cannot sign it; send X-Signature over the timestamp and the body, or leave the timestamp out',
      );
    }
    if (!secretsEqual(headers.secret, secret)) {
      return mismatch('X-Signalgate-Secret', "X-Signalgate-Secret does not match the source's secret");
    }
    return { ok: true };
  }
  if (headers.querySecret) {
    return mismatch(
      'secret',
      "the 'secret' query parameter is retired and never authenticates; send the signature in the X-Signature header (sha256=<hex>) or the secret in the X-Signalgate-Secret header",
    );
  }
  return mismatch(
    'X-Signature',
    'this source requires a signature; send X-Signature: sha256=<hex of HMAC-SHA256(secret, raw body)>',
  );
}

function mismatch(param: string, detail: string): SignatureCheck {
  return { ok: false, code: ErrorCode.HMAC_MISMATCH, param, detail };
}
