import { createHash } from 'node:crypto';
import { ErrorCode, type Problem } from '../errors/catalog.js';
import { isEntryAction } from '../language/index.js';
import { periodEnd, periodOf } from '../metering/quota-period.js';
import { isAllowedAddress } from '../security/allowed-ips.js';
import type { Source } from '../store/records.js';
import { SourceChangedError } from '../store/source-changed.js';
import type { IngestVerdict, Store } from '../store/store.js';
import { answerFor, type InboundAnswer } from './inbound-answer.js';
import type { InboundRequest } from './inbound-request.js';
import { InstantText } from './instant-text.js';
import { judgeBody } from './judge-body.js';
import { listedProblems, refusedRawBody } from './refusal-record.js';
import { verifySignature } from './verify-signature.js';

/** The largest body accepted (check 3 of docs/inbound-api.md). */
export const MAX_BODY_BYTES = 16 * 1024;

/** How long a repeat with the same Idempotency-Key gets the original answer. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

const IDEMPOTENCY_KEY_FORM = /^[\x21-\x7e]{1,255}$/;

const receivedText = new InstantText();
const idempotencySinceText = new InstantText();
const expiresText = new InstantText();
const duplicateSinceText = new InstantText();

const utf8 = new TextDecoder('utf-8', { fatal: true });
const lenientUtf8 = new TextDecoder('utf-8');

/**
 * Runs checks 2 to 9 of docs/inbound-api.md on a request for a known source (`source`: check 1 passed)
 * and answers it; a new signal gets `signalId`, and `body` is the request's body. Every
 * request reaching here is kept in the source's signal log, accepted or not; the answer is
 * built only from what the store committed. Null when the source changed before the commit
 * (`SourceChangedError`): nothing was recorded, and the request is to be checked again
 * against the source as it is now.
 */
export async function receiveSignal(
  store: Store,
  request: InboundRequest,
  source: Source,
  signalId: string,
  body: Buffer,
): Promise<InboundAnswer | null> {
  const receivedAt = receivedText.of(request.receivedAtMillis);
  const period = periodOf(request.receivedAtMillis);

  // Decoded once: strictly, for parsing; leniently (replacement characters) only for the log
  // of a body that is not UTF-8.
  let text: string | null;
  try {
    text = utf8.decode(body);
  } catch {
    text = null;
  }

  const record = async (verdict: IngestVerdict, authenticated: boolean) => {
    const key = authenticated ? (request.idempotencyKey ?? null) : null;
    let outcome;
    try {
      outcome = await store.ingest.commit({
        id: signalId,
        sourceId: source.id,
        sourceRevision: source.revision,
        accountId: source.accountId,
        receivedAt,
        period,
        contentType: request.contentType ?? null,
        rawBody:
          verdict.kind === 'reject' ? refusedRawBody(body, !request.bodyTooLarge) : (text ?? lenientUtf8.decode(body)),
        idempotencyKey: key,
        requestHash: key === null ? null : requestHash(request.contentType, body),
        idempotencySince: idempotencySinceText.of(request.receivedAtMillis - IDEMPOTENCY_WINDOW_MS),
        // Only a source with the guard on pays for the digest; it is compared inside the commit.
        // Only an entry can be a repeat: a close, a cancel or a position target sent twice
        // changes nothing the second time, and one swallowed could leave a position open.
        duplicateCheck:
          verdict.kind === 'accept' && source.duplicateWindowSeconds > 0
            ? {
                bodyDigest: createHash('sha256').update(body).digest('hex'),
                since: isEntryAction(verdict.signal.action)
                  ? duplicateSinceText.of(request.receivedAtMillis - source.duplicateWindowSeconds * 1000)
                  : null,
              }
            : null,
        verdict,
      });
    } catch (error) {
      if (error instanceof SourceChangedError) return null;
      throw error;
    }
    return answerFor(outcome, request.receivedAtMillis, verdict.kind === 'accept' ? verdict.signalJson : null);
  };
  const reject = (problems: Problem[], status: number, authenticated = false) =>
    record({ kind: 'reject', httpStatus: status, problems: listedProblems(problems) }, authenticated);

  if (!isAllowedAddress(source.allowedIps, request.clientAddress)) {
    return reject(
      [
        {
          code: ErrorCode.IP_NOT_ALLOWED,
          detail: `this source takes requests only from the addresses in its allowedIps, and this one came from ${request.clientAddress.slice(0, 100)}; send from an allowed address, or an administrator can add it to the source's allowedIps`,
        },
      ],
      403,
    );
  }
  if (!source.active) {
    return reject(
      [
        {
          code: ErrorCode.SOURCE_INACTIVE,
          detail: 'this source is deactivated; an administrator can activate it again',
        },
      ],
      401,
    );
  }
  if (request.bodyTooLarge) {
    return reject(
      [
        {
          code: ErrorCode.PAYLOAD_TOO_LARGE,
          detail: `the body is larger than ${MAX_BODY_BYTES} bytes; send one signal per request`,
        },
      ],
      413,
    );
  }
  if (source.hmacSecret !== null) {
    const check = verifySignature(source.hmacSecret, body, request.signature, request.receivedAtMillis);
    if (!check.ok) return reject([{ code: check.code, detail: check.detail, param: check.param }], 401);
  }
  if (request.idempotencyKey !== undefined && !IDEMPOTENCY_KEY_FORM.test(request.idempotencyKey)) {
    return reject(
      [
        {
          code: ErrorCode.INVALID_REQUEST,
          param: 'Idempotency-Key',
          detail: 'Idempotency-Key must be 1 to 255 visible ASCII characters (a UUID is a good choice)',
        },
      ],
      400,
    );
  }
  const judged = judgeBody(request.contentType, request.contentEncoding, body, text);
  if (!judged.ok) return reject(judged.problems, judged.httpStatus, true);
  return record(
    {
      kind: 'accept',
      signal: judged.signal,
      signalJson: JSON.stringify(judged.signal),
      expiresAt: expiresText.of(request.receivedAtMillis + source.maxSignalAgeSeconds * 1000),
      quotaExhausted: quotaExhaustedProblem(period),
    },
    true,
  );
}

let exhaustedPeriod = '';
let exhausted: Problem | undefined;

/** The problem a refused charge records; the same for a whole month, so it is made once. */
function quotaExhaustedProblem(period: string): Problem {
  if (exhausted === undefined || period !== exhaustedPeriod) {
    exhaustedPeriod = period;
    exhausted = Object.freeze({
      code: ErrorCode.QUOTA_SIGNALS_IN,
      detail: `the account's monthly signal quota for ${period} is used up; it resets at ${periodEnd(period).toISOString()}, or raise the account's monthlySignalQuota`,
    });
  }
  return exhausted;
}

function requestHash(contentType: string | undefined, body: Buffer): string {
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  return createHash('sha256').update(type).update('\n').update(body).digest('hex');
}
