import type Database from 'better-sqlite3';
import type { IngestDone } from '../ingest-done.js';
import type { ItemResult } from '../item-result.js';
import type { Ingest, IngestOutcome, IngestRequest } from '../ingest.js';
import { acceptedVerdict, duplicateVerdict, ingestRecord, rejectedVerdict, type LogVerdict } from '../ingest-record.js';
import { isoTime } from '../iso-time.js';
import { keyReusedProblem } from '../key-reused-problem.js';
import { SourceChangedError } from '../source-changed.js';
import { isBusy, type SqliteConnection } from './connection.js';
import type { SqliteDeliveries } from './deliveries.js';
import { checkpointDurably } from './checkpoint-durably.js';
import { GroupCommit } from './group-commit.js';
import { IngestBatch } from './ingest-batch.js';
import type { SqliteSignals } from './signals.js';
import type { SqliteSources } from './sources.js';

type BatchTransaction = Database.Transaction<(requests: IngestRequest[]) => ItemResult<IngestDone>[]>;

/**
 * The ingest (`store.ingest.commit`) on SQLite, and the idempotency keys it binds (the `idempotency_keys` table).
 * Ingests are group-committed: one transaction per event-loop turn, committed under
 * `synchronous = NORMAL` and then made durable by an fdatasync of the WAL on the thread pool
 * (`WalSync`), so the event loop keeps serving while the disk works; nobody is answered, handed
 * a delivery, or shown the batch by a read before that returned (the agents are told of their
 * deliveries at the COMMIT: see `makeDurable`).
 */
export class SqliteIngest implements Ingest {
  private readonly ingests: GroupCommit<IngestRequest, IngestOutcome>;
  private readonly batch: BatchTransaction;
  private readonly batchInSavepoints: BatchTransaction;
  private committedTransactions = 0;
  /** Agents with new deliveries in the batch waiting for the disk, told once it is durable. */
  private agentsToTell = new Set<string>();

  constructor(
    private readonly connection: SqliteConnection,
    private readonly parts: { sources: SqliteSources; signals: SqliteSignals; deliveries: SqliteDeliveries },
    /** Tells this store's watchers of agents with new, durable deliveries. */
    private readonly notify: (agentIds: string[]) => void,
    private readonly isClosed: () => boolean,
  ) {
    const db = connection.db;
    // Each request in turn, then the batch's usage and per-day counts, all inside the caller's transaction.
    // A request checked against another revision of its source is not recorded: the batch's
    // transaction holds the write lock, so the revision read here holds until its COMMIT.
    const inBatch = (
      requests: IngestRequest[],
      each: (request: IngestRequest, batch: IngestBatch) => ItemResult<IngestDone>,
    ): ItemResult<IngestDone>[] => {
      const batch = new IngestBatch((sql) => connection.stmt(sql));
      const done = requests.map((request): ItemResult<IngestDone> => {
        const revision = batch.route(request.sourceId)?.revision;
        if (revision === undefined || revision === request.sourceRevision) return each(request, batch);
        // The checks used a source this connection's cache still held.
        parts.sources.forgetCached();
        return { ok: false, error: new SourceChangedError(request.sourceId) };
      });
      batch.writeCounts();
      return done;
    };
    this.batch = db.transaction((requests: IngestRequest[]) =>
      inBatch(requests, (request, batch) => ({ ok: true, value: this.ingestOne(request, batch) })),
    );
    // Called inside the batch transaction, better-sqlite3 runs this in a SAVEPOINT.
    const ingestInSavepoint = db.transaction((request: IngestRequest, batch: IngestBatch) =>
      this.ingestOne(request, batch),
    );
    this.batchInSavepoints = db.transaction((requests: IngestRequest[]) =>
      inBatch(requests, (request, batch) => {
        const counts = batch.counts();
        try {
          return { ok: true, value: ingestInSavepoint(request, batch) };
        } catch (error) {
          batch.restore(counts);
          return { ok: false, error };
        }
      }),
    );
    this.ingests = new GroupCommit(
      (requests) => this.commitBatch(requests),
      () => this.makeDurable(),
      {
        recover: () => checkpointDurably(this.connection),
        // The event loop's agent writes hold the write lock too: the batch waits a turn, not a sleep.
        busy: { isBusy, retryForMs: connection.busyTimeoutMs },
      },
    );
  }

  /** How many transactions have committed ingests: fewer than ingests when grouping works. */
  get transactions(): number {
    return this.committedTransactions;
  }

  commit(request: IngestRequest): Promise<IngestOutcome> {
    if (this.isClosed()) return Promise.reject(new Error('store is closed'));
    return this.ingests.submit(request);
  }

  /** Resolves once every ingest committed before the call is on disk (see `GroupCommit.whenDurable`). */
  whenDurable(): Promise<void> {
    return this.ingests.whenDurable();
  }

  /** Commits whatever is queued and waits until it is durable (for closing). */
  drain(): Promise<void> {
    return this.ingests.drain();
  }

  /**
   * One transaction for the whole batch. Requests do not throw in normal operation, so the
   * batch first runs without savepoints; if one throws (say, an unknown source), that
   * transaction is rolled back and the batch runs again with one savepoint per request, so
   * only the failing request fails. Its COMMIT does not wait for the disk when a `WalSync`
   * does that next (`makeDurable`); NORMAL still syncs around checkpoints, so a checkpoint
   * never outruns the log.
   */
  private commitBatch(requests: IngestRequest[]): ItemResult<IngestOutcome>[] {
    const walSync = this.connection.walSync;
    let done: ItemResult<IngestDone>[] = [];
    this.connection.withoutWaiting(() => {
      if (walSync) this.connection.stmt('PRAGMA synchronous = NORMAL').run();
      try {
        try {
          done = this.batch.immediate(requests);
        } catch (error) {
          // The write lock is held elsewhere: nothing ran, and the batch is tried again later.
          if (isBusy(error)) throw error;
          done = this.batchInSavepoints.immediate(requests);
        }
      } finally {
        if (walSync) this.connection.stmt('PRAGMA synchronous = FULL').run();
      }
    });
    this.committedTransactions++;
    for (const result of done) if (result.ok) for (const id of result.value.agentIds) this.agentsToTell.add(id);
    return done.map((result) => (result.ok ? { ok: true, value: result.value.outcome } : result));
  }

  /**
   * Tells the agents of the batch just committed, then waits for it to be on disk. Telling them
   * is safe before the sync: a hand-out is a write of its own, answered only after a sync that
   * began after its COMMIT, and so after this batch's frames, earlier in the same WAL file. The
   * hand-out's commit then overlaps this sync instead of starting after it (the burst's
   * hand-off: docs/decisions/0004-agents-writes-in-groups.md).
   */
  private async makeDurable(): Promise<void> {
    if (this.agentsToTell.size > 0) {
      const agentIds = [...this.agentsToTell];
      this.agentsToTell = new Set();
      this.notify(agentIds);
    }
    await this.connection.walSync?.sync();
  }

  private ingestOne(request: IngestRequest, batch: IngestBatch): IngestDone {
    const { signals, deliveries } = this.parts;
    const route = batch.route(request.sourceId);
    if (!route) throw new Error(`no source ${request.sourceId}`);
    if (route.accountId !== request.accountId) {
      throw new Error(`source ${request.sourceId} does not belong to account ${request.accountId}`);
    }
    const key = request.idempotencyKey;
    if (key !== null) {
      const held = this.connection
        .stmt('SELECT signal_id, request_hash, created_at FROM idempotency_keys WHERE source_id = ? AND key = ?')
        .get(request.sourceId, key) as
        { signal_id: string; request_hash: string | null; created_at: string } | undefined;
      // An older holder is past the replay window: this request takes the key over below.
      if (held && held.created_at >= isoTime(request.idempotencySince)) {
        if (held.request_hash !== request.requestHash) {
          // A different request under a held key: logged as its own refusal, the key left bound.
          const refused = ingestRecord(request, rejectedVerdict(422, [keyReusedProblem(held.signal_id)]));
          signals.insertSignal(refused, null, null);
          batch.logged(refused.accountId, refused.receivedAt, 'rejected');
          return { outcome: { kind: 'key_reused', record: refused, originalId: held.signal_id }, agentIds: [] };
        }
        const original = signals.readSignal(held.signal_id);
        if (!original) throw new Error(`idempotency key names missing signal ${held.signal_id}`);
        return { outcome: { kind: 'replay', record: original }, agentIds: [] };
      }
    }

    const check = request.duplicateCheck;
    if (check !== null && check.since !== null && request.verdict.kind === 'accept') {
      // The batch's transaction holds the write lock: no other accept can come in between. Only
      // the source's latest accepted signal in the window counts (a digest is kept only with
      // accepted signals), so an entry sent again after a close is no repeat.
      const held = this.connection
        .stmt(
          `SELECT id, body_digest FROM signals WHERE source_id = ? AND received_at >= ? AND body_digest IS NOT NULL
            ORDER BY received_at DESC, id DESC LIMIT 1`,
        )
        .get(request.sourceId, isoTime(check.since)) as { id: string; body_digest: string } | undefined;
      if (held && held.body_digest === check.bodyDigest) {
        const original = signals.readSignal(held.id);
        if (!original) throw new Error(`duplicate of missing signal ${held.id}`);
        const duplicate = ingestRecord(request, duplicateVerdict(request.verdict.signal), { duplicateOf: held.id });
        signals.insertSignal(duplicate, request.verdict.signalJson, null);
        // The key, if any, answers the original from now on, as this request was answered.
        if (key !== null) this.bindKey(request, held.id);
        return { outcome: { kind: 'duplicate', record: duplicate, original }, agentIds: [] };
      }
    }

    let verdict: LogVerdict;
    if (request.verdict.kind === 'accept') {
      const charged = batch.charge(request.accountId, request.period);
      verdict = charged
        ? acceptedVerdict(request.verdict.signal, { period: request.period, ...charged })
        : rejectedVerdict(429, [request.verdict.quotaExhausted]);
    } else {
      verdict = rejectedVerdict(request.verdict.httpStatus, request.verdict.problems);
    }
    const accepted = verdict.status === 'accepted' && request.verdict.kind === 'accept';
    const record = ingestRecord(request, verdict, {
      agents: accepted ? route.agentIds.length : 0,
      halted: accepted ? route.halted.size : 0,
    });
    const normalized = record.signal !== null && request.verdict.kind === 'accept' ? request.verdict.signalJson : null;
    signals.insertSignal(
      record,
      normalized,
      accepted ? (check?.bodyDigest ?? null) : null,
      accepted ? route.risk : null,
    );
    batch.logged(record.accountId, record.receivedAt, accepted ? 'accepted' : 'rejected');

    let agentIds: string[] = [];
    if (accepted && request.verdict.kind === 'accept') {
      agentIds = deliveries.queueDeliveries(record, route.agentIds, isoTime(request.verdict.expiresAt), route.halted);
    }
    // A quota refusal is temporary: it is not bound to the key, so a retry is evaluated afresh.
    if (key !== null && record.httpStatus !== 429) this.bindKey(request, record.id);
    return { outcome: { kind: 'recorded', record }, agentIds };
  }

  /** Binds the request's Idempotency-Key to `signalId` (the request's own entry, or the signal it repeated). */
  private bindKey(request: IngestRequest, signalId: string): void {
    this.connection
      .stmt(
        `INSERT INTO idempotency_keys (source_id, key, signal_id, request_hash, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (source_id, key) DO UPDATE
           SET signal_id = excluded.signal_id, request_hash = excluded.request_hash, created_at = excluded.created_at`,
      )
      .run(request.sourceId, request.idempotencyKey, signalId, request.requestHash, isoTime(request.receivedAt));
  }
}
