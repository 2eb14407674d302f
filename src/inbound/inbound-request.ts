import type { SignatureHeaders } from './verify-signature.js';

/** One `POST /api/inbound/{key}` as the HTTP edge read it: everything the checks need. */
export interface InboundRequest {
  /** The source key, percent-decoded. */
  authKey: string;
  receivedAtMillis: number;
  contentType: string | undefined;
  contentEncoding: string | undefined;
  /** The body as received; when too large, the first MAX_BODY_BYTES of it. */
  body: Uint8Array;
  bodyTooLarge: boolean;
  signature: SignatureHeaders;
  idempotencyKey: string | undefined;
  /** Where the request came from (the socket's peer, or X-Forwarded-For from a trusted proxy), as the source's allowedIps judge it. */
  clientAddress: string;
}
