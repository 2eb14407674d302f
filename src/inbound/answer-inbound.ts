import { Buffer } from 'node:buffer';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../errors/problem-body.js';
import { newSignalId } from '../security/signal-id.js';
import type { Store } from '../store/store.js';
import type { InboundAnswer } from './inbound-answer.js';
import type { InboundRequest } from './inbound-request.js';
import { receiveSignal } from './receive-signal.js';
import { ErrorCode } from '../errors/catalog.js';

const UNKNOWN_KEY = problemBody([
  {
    code: ErrorCode.INVALID_SOURCE_KEY,
    detail: 'no source has this key; copy the inbound URL from the source detail view (the key may have been rotated)',
  },
]);
const UNKNOWN_KEY_TEXT = JSON.stringify(UNKNOWN_KEY);

/** How often one request is checked before its source's changes are taken as a failure. */
const MAX_CHECKS = 5;

/**
 * The inbound checks 1 to 9 (docs/inbound-api.md) and the durable commit for one inbound request, against `store`:
 * the key first, then everything `receiveSignal` does. When the source changed between the
 * checks and the commit (deactivated, key rotated, secret or max age set), nothing was
 * recorded and the request is checked again from the key on, so it is judged by the source
 * as it is at its commit.
 */
export async function answerInbound(store: Store, request: InboundRequest): Promise<InboundAnswer> {
  const body = Buffer.isBuffer(request.body)
    ? request.body
    : Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength);
  for (let check = 1; ; check++) {
    const source = await store.sources.findByAuthKey(request.authKey);
    if (source === null) {
      return {
        status: UNKNOWN_KEY.status,
        headers: { 'content-type': PROBLEM_CONTENT_TYPE },
        body: UNKNOWN_KEY_TEXT,
        signalId: null,
        unknownKey: true,
      };
    }
    const answer = await receiveSignal(store, request, source, newSignalId(request.receivedAtMillis), body);
    if (answer !== null) return answer;
    if (check === MAX_CHECKS)
      throw new Error(`source ${source.id} changed ${MAX_CHECKS} times while one request was checked`);
  }
}
