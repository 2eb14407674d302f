import { Buffer } from 'node:buffer';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../errors/problem-body.js';
import type { InboundAnswer } from '../ingest/inbound-answer.js';
import { receiveSignal } from '../ingest/receive-signal.js';
import { newSignalId } from '../security/signal-id.js';
import type { Store } from '../store/store.js';
import type { InboundReply, InboundWork } from './lane.js';

const UNKNOWN_KEY = problemBody([
  {
    code: 'INVALID_SOURCE_KEY',
    detail: 'no source has this key; copy the inbound URL from the source detail view (the key may have been rotated)',
  },
]);
const UNKNOWN_KEY_TEXT = JSON.stringify(UNKNOWN_KEY);

/** How often one request is checked before its source's changes are taken as a failure. */
const MAX_CHECKS = 5;

/**
 * CONTRACT §3 checks 1 to 9 and the durable commit for one inbound request, against `store`:
 * the key first, then everything `receiveSignal` does. When the source changed between the
 * checks and the commit (deactivated, key rotated, secret or max age set), nothing was
 * recorded and the request is checked again from the key on, so it is judged by the source
 * as it is at its commit.
 */
export async function answerInbound(store: Store, work: InboundWork): Promise<InboundReply> {
  const body = Buffer.isBuffer(work.body) ? work.body : Buffer.from(work.body.buffer, work.body.byteOffset, work.body.byteLength);
  for (let check = 1; ; check++) {
    const source = await store.findSourceByAuthKey(work.authKey);
    if (source === null) {
      return { status: UNKNOWN_KEY.status, headers: { 'content-type': PROBLEM_CONTENT_TYPE }, body: UNKNOWN_KEY_TEXT, signalId: null, unknownKey: true };
    }
    const result = await receiveSignal(store, {
      source,
      signalId: newSignalId(work.receivedAtMillis),
      receivedAtMillis: work.receivedAtMillis,
      contentType: work.contentType,
      contentEncoding: work.contentEncoding,
      body,
      bodyTooLarge: work.bodyTooLarge,
      signature: work.signature,
      idempotencyKey: work.idempotencyKey,
      clientAddress: work.clientAddress,
    });
    if (result !== null) return reply(result);
    if (check === MAX_CHECKS) throw new Error(`source ${source.id} changed ${MAX_CHECKS} times while one request was checked`);
  }
}

function reply(result: InboundAnswer): InboundReply {
  const headers = { ...result.headers };
  if (result.replay) headers['idempotent-replayed'] = 'true';
  return { status: result.status, headers, body: JSON.stringify(result.body), signalId: result.signalId, unknownKey: false };
}
