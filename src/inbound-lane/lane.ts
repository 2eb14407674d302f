import type { SignatureHeaders } from '../ingest/verify-signature.js';

/** One `POST /api/inbound/{key}` as the HTTP edge read it: everything the checks need. */
export interface InboundWork {
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
  /** Where the request came from, as the source's allowedIps judge it. */
  clientAddress: string;
}

/** The answer to send, already serialised, and the signal log entry behind it (if any). */
export interface InboundReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  signalId: string | null;
  /** No source has the key (401 `INVALID_SOURCE_KEY`): nothing was recorded. */
  unknownKey: boolean;
}

/** Takes inbound requests through checks 1 to 9 and the commit, in this thread or another. */
export interface InboundLane {
  receive(work: InboundWork): Promise<InboundReply>;
  /** Why requests can no longer be received (the lane's thread died), or null while they can. */
  readonly failure: Error | null;
  /** Answers what is in flight, then stops; nothing is received after. */
  close(): Promise<void>;
}
