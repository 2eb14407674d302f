import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { Problem } from '../errors/catalog.js';
import { PROBLEM_CONTENT_TYPE, problemBody } from '../errors/problem-body.js';
import type { InboundAccessLog } from '../logging/inbound-access-log.js';
import type { WrongKeyLog } from '../logging/wrong-key-log.js';
import { maskedInboundPath } from '../logging/logger.js';
import type { ClientAddressOf } from '../http-kit/client-address.js';
import type { DrainState } from '../http-kit/drain-state.js';
import {
  REQUEST_FAILED,
  SHUTTING_DOWN,
  STORE_RETRY_AFTER_SECONDS,
  STORE_UNAVAILABLE,
} from '../http-kit/server-problems.js';
import type { InboundMeter } from '../metrics/inbound-meter.js';
import { OutcomeUnknownError } from '../store/outcome-unknown.js';
import { isStoreUnavailable } from '../store/store-unavailable.js';
import type { InboundLane } from './inbound-lane.js';
import { decodedKey } from './inbound-url.js';
import type { InboundAlert } from './inbound-answer.js';
import { readBoundedBody } from './read-body.js';
import { MAX_BODY_BYTES } from './receive-signal.js';

/**
 * `POST /api/inbound/{sourceAuthKey}`, the hot path, answered on node:http directly rather than
 * through the router: it is the one route every signal takes, and the router's per-request
 * work was a large share of its cost. The body is read here (an oversized one is never
 * buffered whole); the checks, in docs/inbound-api.md's order from the key on, and the commit run in
 * the inbound lane. Nothing is answered before the store committed what the answer says, and
 * a request that may have been committed but cannot be answered gets no answer at all.
 */
export function createInboundHandler(opts: {
  lane: InboundLane;
  logger: Logger;
  accessLog: InboundAccessLog;
  /** Where requests with a key no source has are counted, in place of an access line each. */
  wrongKeyLog: WrongKeyLog;
  drain: DrainState;
  clientAddressOf: ClientAddressOf;
  /** Counts each answer for GET /metrics. */
  meter: InboundMeter;
  /** Told of refusals and quota thresholds (the notifications), after the answer is written. */
  onAlert?: (alert: InboundAlert) => void;
}) {
  const { lane, logger, accessLog, wrongKeyLog, drain, clientAddressOf, meter, onAlert } = opts;
  let lastUnavailableLog = 0;
  return (req: IncomingMessage, res: ServerResponse, encodedKey: string): void => {
    const startedAt = performance.now();
    const clientAddress = clientAddressOf(req);
    const answer = (
      status: number,
      headers: Record<string, string>,
      body: string,
      signalId: string | null,
      unknownKey = false,
      noAgentsSourceId?: string,
    ) => {
      // Answers finished while draining close their connection, so keep-alive clients do not
      // hold the shutdown open until their idle timeout.
      if (drain.closing) headers.connection = 'close';
      headers['content-length'] = String(Buffer.byteLength(body));
      res.writeHead(status, headers);
      res.end(body);
      const ms = performance.now() - startedAt;
      meter.record(status, ms);
      if (unknownKey) wrongKeyLog.record(clientAddress);
      else
        accessLog.record({
          encodedKey,
          statusCode: status,
          ms: Math.round(ms * 100) / 100,
          clientAddress,
          signalId,
          noAgentsSourceId,
        });
    };
    const problem = (problems: Problem[], headers: Record<string, string> = {}) => {
      const body = problemBody(problems);
      answer(body.status, { ...headers, 'content-type': PROBLEM_CONTENT_TYPE }, JSON.stringify(body), null);
    };

    if (drain.closing) {
      problem([SHUTTING_DOWN], { connection: 'close', 'retry-after': '1' });
      return;
    }
    handle().catch((error: unknown) => {
      if (error instanceof OutcomeUnknownError) {
        // Neither a 202 nor an error would be true: the connection breaks, as in a crash.
        logger.error(
          { err: error, method: 'POST', url: maskedInboundPath(encodedKey) },
          'inbound request may have been stored but cannot be answered; connection closed unanswered',
        );
        res.destroy();
        return;
      }
      if (res.headersSent) return;
      if (isStoreUnavailable(error)) {
        // Nothing was stored: the sender may retry. Each request has its access line already, so
        // the cause is logged at most once a second rather than per request.
        const now = Date.now();
        if (now - lastUnavailableLog >= 1000) {
          lastUnavailableLog = now;
          logger.warn({ err: error }, 'the store is unavailable; inbound requests are answered 503 until it is back');
        }
        problem([STORE_UNAVAILABLE], { 'retry-after': String(STORE_RETRY_AFTER_SECONDS) });
        return;
      }
      logger.error({ err: error, req }, 'request failed');
      problem([REQUEST_FAILED]);
    });

    async function handle(): Promise<void> {
      const receivedAtMillis = Date.now();
      const { body, tooLarge } = await readBoundedBody(req, MAX_BODY_BYTES);
      const inbound = await lane.receive({
        authKey: decodedKey(encodedKey),
        receivedAtMillis,
        contentType: req.headers['content-type'],
        contentEncoding: header(req, 'content-encoding'),
        body,
        bodyTooLarge: tooLarge,
        signature: {
          signature: header(req, 'x-signature'),
          timestamp: header(req, 'x-signature-timestamp'),
          secret: header(req, 'x-signalgate-secret'),
          querySecret: hasSecretQuery(req.url!),
        },
        idempotencyKey: header(req, 'idempotency-key'),
        clientAddress,
      });
      const headers = { ...inbound.headers };
      if (tooLarge) headers.connection = 'close';
      const notice = inbound.notice;
      // The warning of a signal nobody will execute goes out with its access line, as cheaply.
      answer(
        inbound.status,
        headers,
        inbound.body,
        inbound.signalId,
        inbound.unknownKey,
        notice?.kind === 'no_agents' ? notice.sourceId : undefined,
      );
      if (inbound.alert && onAlert) onAlert(inbound.alert);
      if (notice?.kind === 'duplicate') {
        logger.info(
          { signalId: notice.signalId, sourceId: notice.sourceId, duplicateOf: notice.duplicateOf },
          `duplicate of ${notice.duplicateOf} (an entry with the same body as the source's previous accepted signal, within its duplicate window): answered as it, not charged or delivered again`,
        );
      }
    }
  };
}

function hasSecretQuery(url: string): boolean {
  const queryAt = url.indexOf('?');
  return queryAt !== -1 && new URLSearchParams(url.slice(queryAt + 1)).has('secret');
}

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
