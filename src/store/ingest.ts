import type { Problem } from '../errors/catalog.js';
import type { NormalizedSignal } from '../language/index.js';
import type { SignalRecord } from './records.js';

/**
 * The inbound hot path's one write. Records one inbound request in the source's signal log,
 * atomically with everything it implies: the idempotency-key lookup, the conditional quota
 * charge and the deliveries to the routed agents.
 */
export interface Ingest {
  /**
   * Resolves after the commit. Fails with `SourceChangedError`, recording nothing, when the
   * source's revision is no longer `sourceRevision`; no change of the source commits between
   * that comparison and the request's commit.
   */
  commit(request: IngestRequest): Promise<IngestOutcome>;
}

export interface IngestRequest {
  /** The id the signal gets when this request is a new one. */
  id: string;
  sourceId: string;
  /**
   * The source's revision the request was checked against. When the source has another one at
   * the commit, nothing is recorded and `commit` fails with `SourceChangedError`.
   */
  sourceRevision: number;
  accountId: string;
  receivedAt: string;
  /** `YYYY-MM` of `receivedAt` in UTC: the quota period charged. */
  period: string;
  contentType: string | null;
  rawBody: string;
  /**
   * From the `Idempotency-Key` header; null when absent or the request was not authenticated.
   * The key is bound to the recorded answer for `idempotencySince`…now, except a 429 quota
   * refusal, which is temporary: a retry with the same key is then evaluated afresh.
   */
  idempotencyKey: string | null;
  /** A digest of what makes the request the same request (content type and body). */
  requestHash: string | null;
  /** Repeats with the same key are answered from the original while it is younger than this. */
  idempotencySince: string;
  /**
   * The source's duplicate guard, when it is on: the SHA-256 hex of the raw body, kept with an
   * accepted signal, and the start of the window. An accepted request is logged as a duplicate
   * when the source's latest accepted signal at or after `since` has the same digest: a repeat
   * of the signal just before it, not of any earlier one, so close, open, close executes every
   * close. `since` null: the request cannot be a repeat (an action that changes nothing when
   * applied twice: closes, cancels, position targets), and its digest is only kept, so a later
   * entry compares with it. Null: guard off.
   */
  duplicateCheck: { bodyDigest: string; since: string | null } | null;
  verdict: IngestVerdict;
}

export type IngestVerdict =
  /**
   * A valid signal: charge one unit of the account's quota unless exhausted (then it is
   * recorded as rejected with 429 QUOTA_SIGNALS_IN), and queue one delivery per routed agent
   * (the source's agentIds, or every agent of the account when that list is empty), each
   * expiring at `expiresAt`. `quotaExhausted` is the problem recorded (code QUOTA_SIGNALS_IN,
   * httpStatus 429) when the charge fails.
   */
  | {
      kind: 'accept';
      signal: NormalizedSignal;
      /**
       * `signal` as JSON text, made once by the caller: the log stores it and the inbound answer
       * embeds it, rather than each serialising the signal again.
       */
      signalJson: string;
      expiresAt: string;
      quotaExhausted: Problem;
    }
  /** A refused request: logged with its status and problems, never charged or delivered. */
  | { kind: 'reject'; httpStatus: number; problems: Problem[] };

export type IngestOutcome =
  /** The request was new and is now in the log: accepted (status `queued`) or rejected. */
  | { kind: 'recorded'; record: SignalRecord }
  /** A repeat of an earlier request with the same idempotency key: the original record. */
  | { kind: 'replay'; record: SignalRecord }
  /**
   * The key is held, within the window, by a different request (`originalId`): this request is
   * now in the log as its own rejected entry (422 IDEMPOTENCY_KEY_REUSED, never charged or
   * delivered), and the key stays bound to the original.
   */
  | { kind: 'key_reused'; record: SignalRecord; originalId: string }
  /**
   * The raw body repeats `original`, accepted on the same source within its duplicate window:
   * this request is logged as `record` (status `duplicate`, never charged or delivered) and
   * answered with the original's 202.
   */
  | { kind: 'duplicate'; record: SignalRecord; original: SignalRecord };
