import { join } from 'node:path';
import Database from 'better-sqlite3';
import { createDirectory } from '../create-directory.js';
import type { Account, Agent, AgentSignal, DashboardSession, SignalRecord, SignalWithDeliveries, Source, Usage } from '../records.js';
import { dayAfter } from '../day-after.js';
import { recordPage, rowsForPage } from '../record-page.js';
import type {
  AccountPatch,
  Ack,
  AckOutcome,
  AgentFilter,
  AgentSessionClaim,
  DayCount,
  DeleteAgentOutcome,
  IngestOutcome,
  IngestRequest,
  PageRequest,
  RecordPage,
  SignalFilter,
  SignalPage,
  SourceFilter,
  SourcePatch,
  Store,
} from '../store.js';
import { authKeyHash } from '../auth-key-hash.js';
import { acceptedVerdict, ingestRecord, rejectedVerdict, type LogVerdict } from '../ingest-record.js';
import { isoTime, isoTimeOrNull } from '../iso-time.js';
import { keyReusedProblem } from '../key-reused-problem.js';
import { patchedSource } from '../patched-source.js';
import { readMigrationFiles } from '../migration-files.js';
import { rowsToRead, signalPage } from '../signal-page.js';
import { SourceChangedError } from '../source-changed.js';
import { liftMallocTrimThreshold } from './malloc-trim-guard.js';
import type { IngestDone } from '../ingest-done.js';
import type { ItemResult } from '../item-result.js';
import { GroupCommit } from './group-commit.js';
import { WalSync } from './wal-sync.js';
import { IngestBatch, QUOTA_AND_USE_SQL } from './ingest-batch.js';
import {
  accountOf,
  agentOf,
  agentSignalOf,
  deliveryOf,
  jsonText,
  signalOf,
  sourceOf,
  type AccountRow,
  type AgentRow,
  type AgentSignalRow,
  type DeliveryRow,
  type SignalRow,
  type SourceRow,
} from './sqlite-rows.js';

export const SQLITE_FILE_NAME = 'signalgate.db';

export interface SqliteStoreOptions {
  /** The directory holding `signalgate.db`; created when missing. */
  dataDir: string;
  /** How long a write waits for another process (e.g. the CLI) to release the file. */
  busyTimeoutMs?: number;
}

/** Opens (creating when missing) the SQLite store; `migrate()` must run before use. */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  createDirectory(options.dataDir);
  return new SqliteStore(join(options.dataDir, SQLITE_FILE_NAME), options.busyTimeoutMs ?? 5000);
}

/**
 * The embedded store. better-sqlite3 is synchronous, so every statement runs on the event
 * loop. Ingests are group-committed: one transaction per event-loop turn, committed under
 * `synchronous = NORMAL` and then made durable by an fdatasync of the WAL on the thread pool
 * (`WalSync`), so the event loop keeps serving while the disk works; nobody is answered, told
 * of a delivery, or shown the batch by a read before that returned. Every other write commits
 * on its own under `synchronous = FULL`, whose fsync also covers any batch still on its way.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private readonly db: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly listeners = new Set<(agentIds: string[]) => void>();
  private readonly ingests: GroupCommit<IngestRequest, IngestOutcome>;
  private readonly ingestBatch: Database.Transaction<(requests: IngestRequest[]) => ItemResult<IngestDone>[]>;
  private readonly ingestBatchInSavepoints: Database.Transaction<(requests: IngestRequest[]) => ItemResult<IngestDone>[]>;
  private committedIngestTransactions = 0;
  private closed = false;
  /** Null when the file is not in WAL mode; ingests then commit under FULL like the rest. */
  private readonly walSync: WalSync | null;
  /** Agents with new deliveries in the batch waiting for the disk, told once it is durable. */
  private agentsToTell = new Set<string>();

  private readonly sourceCache = new Map<string, Source>();
  private sourceCacheVersion = -1;
  private sourceCacheChecked = false;

  constructor(
    readonly path: string,
    busyTimeoutMs: number,
  ) {
    this.db = new Database(path, { timeout: busyTimeoutMs });
    // WAL lets readers (the CLI, the admin API) run beside the writer; FULL syncs the WAL on
    // every commit so an answered 202 survives a power cut, not only a process crash. Ingest
    // batches alone commit under NORMAL and get the same sync from `walSync` before answering.
    const journalMode = this.db.pragma('journal_mode = WAL', { simple: true });
    this.db.pragma('synchronous = FULL');
    this.walSync = journalMode === 'wal' ? new WalSync(path) : null;
    this.db.pragma(`busy_timeout = ${Math.max(0, Math.floor(busyTimeoutMs))}`);
    this.db.pragma('foreign_keys = ON');
    liftMallocTrimThreshold(this.db);
    // Each request in turn, then the batch's usage counts, all inside the caller's transaction.
    // A request checked against another revision of its source is not recorded: the batch's
    // transaction holds the write lock, so the revision read here holds until its COMMIT.
    const inBatch = (
      requests: IngestRequest[],
      each: (request: IngestRequest, batch: IngestBatch) => ItemResult<IngestDone>,
    ): ItemResult<IngestDone>[] => {
      const batch = new IngestBatch((sql) => this.stmt(sql));
      const done = requests.map((request): ItemResult<IngestDone> => {
        const revision = batch.route(request.sourceId)?.revision;
        if (revision === undefined || revision === request.sourceRevision) return each(request, batch);
        // The checks used a source this connection's cache still held.
        this.sourceCache.clear();
        return { ok: false, error: new SourceChangedError(request.sourceId) };
      });
      batch.writeUsage();
      return done;
    };
    this.ingestBatch = this.db.transaction((requests: IngestRequest[]) =>
      inBatch(requests, (request, batch) => ({ ok: true, value: this.ingestOne(request, batch) })),
    );
    // Called inside the batch transaction, better-sqlite3 runs this in a SAVEPOINT.
    const ingestInSavepoint = this.db.transaction((request: IngestRequest, batch: IngestBatch) =>
      this.ingestOne(request, batch),
    );
    this.ingestBatchInSavepoints = this.db.transaction((requests: IngestRequest[]) =>
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
      (requests) => this.commitIngests(requests),
      () => this.makeIngestsDurable(),
    );
  }

  /** How many transactions have committed ingests: fewer than ingests when grouping works. */
  get ingestTransactions(): number {
    return this.committedIngestTransactions;
  }

  /** A pragma's value in force on this connection (journal_mode, synchronous, …). */
  pragma(name: string): unknown {
    return this.db.pragma(name, { simple: true });
  }

  async migrate(): Promise<void> {
    const files = readMigrationFiles('sqlite');
    // IMMEDIATE takes the write lock first, so two processes starting at once apply each file once.
    this.db
      .transaction(() => {
        this.db.exec(
          'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL) STRICT',
        );
        const applied = new Set(
          (this.db.prepare('SELECT version FROM schema_migrations').all() as { version: number }[]).map(
            (row) => row.version,
          ),
        );
        for (const file of files) {
          if (applied.has(file.version)) continue;
          this.db.exec(file.sql);
          this.db
            .prepare('INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)')
            .run(file.version, file.name, new Date().toISOString());
        }
      })
      .immediate();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.ingests.drain();
    } finally {
      this.statements.clear();
      this.db.close();
      this.walSync?.close();
    }
  }

  // Settings.

  async claimSetting(name: string, value: string): Promise<string> {
    return this.db
      .transaction(() => {
        this.stmt('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING').run(name, value);
        return (this.stmt('SELECT value FROM settings WHERE name = ?').get(name) as { value: string }).value;
      })
      .immediate();
  }

  async getSetting(name: string): Promise<string | null> {
    const row = this.stmt('SELECT value FROM settings WHERE name = ?').get(name) as { value: string } | undefined;
    return row?.value ?? null;
  }

  /** The file is opened once and stays open; a failing inbound thread is reported by the lane. */
  async reachabilityProblem(): Promise<string | null> {
    return this.closed ? 'the store is closed' : null;
  }

  async setSetting(name: string, value: string): Promise<void> {
    this.stmt('INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value').run(
      name,
      value,
    );
  }

  // Accounts and usage.

  async createAccount(account: Account): Promise<void> {
    this.stmt('INSERT INTO accounts (id, name, monthly_signal_quota, created_at) VALUES (?, ?, ?, ?)').run(
      account.id,
      account.name,
      account.monthlySignalQuota,
      isoTime(account.createdAt),
    );
  }

  async getAccount(id: string): Promise<Account | null> {
    const row = this.stmt('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
    return row ? accountOf(row) : null;
  }

  /** One statement: the inbound thread's next batch reads the new quota inside its own transaction. */
  async updateAccount(id: string, patch: AccountPatch): Promise<Account | null> {
    const row = this.stmt(
      `UPDATE accounts SET name = COALESCE(?, name), monthly_signal_quota = COALESCE(?, monthly_signal_quota)
        WHERE id = ? RETURNING *`,
    ).get(patch.name ?? null, patch.monthlySignalQuota ?? null, id) as AccountRow | undefined;
    return row ? accountOf(row) : null;
  }

  async getUsage(accountId: string, period: string): Promise<Usage | null> {
    await this.ingests.whenDurable();
    const row = this.stmt(QUOTA_AND_USE_SQL).get(period, accountId) as { quota: number; used: number } | undefined;
    return row ? { period, used: row.used, limit: row.quota } : null;
  }

  // Agents.

  async createAgent(agent: Agent): Promise<void> {
    this.stmt(
      `INSERT INTO agents (id, account_id, name, token_hash, created_at, last_seen_at, state)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      agent.id,
      agent.accountId,
      agent.name,
      agent.tokenHash,
      isoTime(agent.createdAt),
      isoTimeOrNull(agent.lastSeenAt),
      jsonText(agent.state),
    );
  }

  async getAgent(id: string): Promise<Agent | null> {
    const row = this.stmt('SELECT * FROM agents WHERE id = ?').get(id) as AgentRow | undefined;
    return row ? agentOf(row) : null;
  }

  async findAgentByTokenHash(tokenHash: string): Promise<Agent | null> {
    const row = this.stmt('SELECT * FROM agents WHERE token_hash = ?').get(tokenHash) as AgentRow | undefined;
    return row ? agentOf(row) : null;
  }

  async saveAgentState(agentId: string, state: unknown, now: string): Promise<void> {
    this.stmt('UPDATE agents SET state = ?, last_seen_at = ? WHERE id = ?').run(jsonText(state), isoTime(now), agentId);
  }

  async touchAgent(agentId: string, now: string): Promise<void> {
    this.stmt('UPDATE agents SET last_seen_at = ? WHERE id = ?').run(isoTime(now), agentId);
  }

  // Sources.

  async createSource(source: Source): Promise<void> {
    this.sourceCache.clear();
    this.stmt(
      `INSERT INTO sources (id, account_id, name, auth_key, auth_key_hash, active, hmac_secret, agent_ids,
                            max_signal_age_seconds, created_at, revision)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      source.id,
      source.accountId,
      source.name,
      source.authKey,
      authKeyHash(source.authKey),
      source.active ? 1 : 0,
      source.hmacSecret,
      JSON.stringify(source.agentIds),
      source.maxSignalAgeSeconds,
      isoTime(source.createdAt),
      source.revision,
    );
  }

  async getSource(id: string): Promise<Source | null> {
    const row = this.stmt('SELECT * FROM sources WHERE id = ?').get(id) as SourceRow | undefined;
    return row ? sourceOf(row) : null;
  }

  /**
   * Every inbound request starts here, so found sources are cached. The cache is dropped on this
   * connection's own source writes and whenever `data_version` says another connection (the
   * CLI) committed, so a rotated key or deactivated source stops working at once.
   */
  async findSourceByAuthKey(authKey: string): Promise<Source | null> {
    if (!this.sourceCacheChecked) {
      // Asking costs a read transaction on the WAL: once per event-loop turn is enough.
      this.sourceCacheChecked = true;
      setImmediate(() => (this.sourceCacheChecked = false));
      const version = this.stmt('PRAGMA data_version').pluck().get() as number;
      if (version !== this.sourceCacheVersion) {
        this.sourceCache.clear();
        this.sourceCacheVersion = version;
      }
    }
    const cached = this.sourceCache.get(authKey);
    if (cached) return cached;
    const row = this.stmt('SELECT * FROM sources WHERE auth_key_hash = ?').get(authKeyHash(authKey)) as
      | SourceRow
      | undefined;
    if (!row) return null;
    const source = Object.freeze(sourceOf(row));
    this.sourceCache.set(authKey, source);
    return source;
  }

  async updateSource(id: string, patch: SourcePatch): Promise<Source | null> {
    this.sourceCache.clear();
    return this.db
      .transaction((): Source | null => {
        const row = this.stmt('SELECT * FROM sources WHERE id = ?').get(id) as SourceRow | undefined;
        if (!row) return null;
        const next = patchedSource(sourceOf(row), patch);
        this.stmt(
          `UPDATE sources SET name = ?, auth_key = ?, auth_key_hash = ?, active = ?, hmac_secret = ?, agent_ids = ?,
                              max_signal_age_seconds = ?, revision = ?
            WHERE id = ?`,
        ).run(
          next.name,
          next.authKey,
          authKeyHash(next.authKey),
          next.active ? 1 : 0,
          next.hmacSecret,
          JSON.stringify(next.agentIds),
          next.maxSignalAgeSeconds,
          next.revision,
          id,
        );
        if (next.maxSignalAgeSeconds !== row.max_signal_age_seconds) {
          // The new age applies to what is not final yet. Driven by the pending deliveries (a
          // partial index), not by the source's whole log. Times are kept as
          // 'YYYY-MM-DDTHH:MM:SS.sssZ'; %f is seconds with milliseconds.
          this.stmt(
            `UPDATE deliveries
                SET expires_at = (SELECT strftime('%Y-%m-%dT%H:%M:%fZ', s.received_at, '+' || ? || ' seconds')
                                    FROM signals s WHERE s.id = deliveries.signal_id)
              WHERE status IN ('queued', 'delivered')
                AND (SELECT s.source_id FROM signals s WHERE s.id = deliveries.signal_id) = ?`,
          ).run(next.maxSignalAgeSeconds, id);
        }
        return next;
      })
      .immediate();
  }

  // The inbound hot path.

  ingest(request: IngestRequest): Promise<IngestOutcome> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return this.ingests.submit(request);
  }

  /**
   * One transaction for the whole batch. Requests do not throw in normal operation, so the
   * batch first runs without savepoints; if one throws (say, an unknown source), that
   * transaction is rolled back and the batch runs again with one savepoint per request, so
   * only the failing request fails. Its COMMIT does not wait for the disk when a `WalSync`
   * does that next (`makeIngestsDurable`); NORMAL still syncs around checkpoints, so a
   * checkpoint never outruns the log.
   */
  private commitIngests(requests: IngestRequest[]): ItemResult<IngestOutcome>[] {
    let done: ItemResult<IngestDone>[];
    if (this.walSync) this.stmt('PRAGMA synchronous = NORMAL').run();
    try {
      try {
        done = this.ingestBatch.immediate(requests);
      } catch {
        done = this.ingestBatchInSavepoints.immediate(requests);
      }
    } finally {
      if (this.walSync) this.stmt('PRAGMA synchronous = FULL').run();
    }
    this.committedIngestTransactions++;
    for (const result of done) if (result.ok) for (const id of result.value.agentIds) this.agentsToTell.add(id);
    return done.map((result) => (result.ok ? { ok: true, value: result.value.outcome } : result));
  }

  /** Waits for the batch just committed to be on disk; then, and only then, agents hear of it. */
  private async makeIngestsDurable(): Promise<void> {
    await this.walSync?.sync();
    if (this.agentsToTell.size === 0) return;
    const agentIds = [...this.agentsToTell];
    this.agentsToTell = new Set();
    this.notify(agentIds);
  }

  private ingestOne(request: IngestRequest, batch: IngestBatch): IngestDone {
    const route = batch.route(request.sourceId);
    if (!route) throw new Error(`no source ${request.sourceId}`);
    if (route.accountId !== request.accountId) {
      throw new Error(`source ${request.sourceId} does not belong to account ${request.accountId}`);
    }
    const key = request.idempotencyKey;
    if (key !== null) {
      const held = this.stmt(
        'SELECT signal_id, request_hash, created_at FROM idempotency_keys WHERE source_id = ? AND key = ?',
      ).get(request.sourceId, key) as { signal_id: string; request_hash: string | null; created_at: string } | undefined;
      // An older holder is past the replay window: this request takes the key over below.
      if (held && held.created_at >= isoTime(request.idempotencySince)) {
        if (held.request_hash !== request.requestHash) {
          // A different request under a held key: logged as its own refusal, the key left bound.
          const refused = ingestRecord(request, rejectedVerdict(422, [keyReusedProblem(held.signal_id)]));
          this.insertSignal(refused);
          return { outcome: { kind: 'key_reused', record: refused, originalId: held.signal_id }, agentIds: [] };
        }
        const original = this.readSignal(held.signal_id);
        if (!original) throw new Error(`idempotency key names missing signal ${held.signal_id}`);
        return { outcome: { kind: 'replay', record: original }, agentIds: [] };
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
    const record = ingestRecord(request, verdict);
    this.insertSignal(record);

    let agentIds: string[] = [];
    if (record.status === 'queued' && request.verdict.kind === 'accept') {
      agentIds = this.queueDeliveries(record, route.agentIds, isoTime(request.verdict.expiresAt));
    }
    // A quota refusal is temporary: it is not bound to the key, so a retry is evaluated afresh.
    if (key !== null && record.httpStatus !== 429) {
      this.stmt(
        `INSERT INTO idempotency_keys (source_id, key, signal_id, request_hash, created_at) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (source_id, key) DO UPDATE
           SET signal_id = excluded.signal_id, request_hash = excluded.request_hash, created_at = excluded.created_at`,
      ).run(request.sourceId, key, record.id, request.requestHash, record.receivedAt);
    }
    return { outcome: { kind: 'recorded', record }, agentIds };
  }

  private insertSignal(record: SignalRecord): void {
    this.stmt(
      `INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, code, detail, param, errors,
                            content_type, raw_body, normalized, idempotency_key, quota_period, quota_used, quota_limit)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      record.id,
      record.sourceId,
      record.accountId,
      record.receivedAt,
      record.status,
      record.httpStatus,
      record.code,
      record.detail,
      record.param,
      jsonText(record.errors),
      record.contentType,
      record.rawBody,
      jsonText(record.signal),
      record.idempotencyKey,
      record.quota?.period ?? null,
      record.quota?.used ?? null,
      record.quota?.limit ?? null,
    );
  }

  /** One delivery per routed agent, each at the agent's next queue position. */
  private queueDeliveries(record: SignalRecord, agentIds: string[], expiresAt: string): string[] {
    const bump = this.stmt('UPDATE agents SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq');
    const insert = this.stmt(
      `INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, attempts) VALUES (?, ?, ?, 'queued', ?, 0)`,
    );
    for (const agentId of agentIds) {
      const { last_seq: seq } = bump.get(agentId) as { last_seq: number };
      insert.run(record.id, agentId, seq, expiresAt);
    }
    return agentIds;
  }

  // The signal log.

  async listSignals(filter: SignalFilter): Promise<SignalPage> {
    await this.ingests.whenDurable();
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.sourceId !== undefined) {
      where.push('source_id = ?');
      params.push(filter.sourceId);
    }
    if (filter.status !== undefined) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.symbol !== undefined) {
      // The expression of the index signals_symbol_log, so that index serves it.
      where.push("json_extract(normalized, '$.symbol') = ?");
      params.push(filter.symbol);
    }
    if (filter.before !== undefined) {
      // An unknown cursor compares as NULL, so it answers nothing rather than the first page.
      where.push('(received_at, id) < (SELECT received_at, id FROM signals WHERE id = ?)');
      params.push(filter.before);
    }
    const sql = `SELECT * FROM signals ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
                 ORDER BY received_at DESC, id DESC LIMIT ?`;
    params.push(rowsToRead(filter));
    const rows = this.stmt(sql).all(...params) as SignalRow[];
    return signalPage(filter, rows.map(signalOf));
  }

  async getSignal(id: string): Promise<SignalWithDeliveries | null> {
    await this.ingests.whenDurable();
    const signal = this.readSignal(id);
    if (!signal) return null;
    const deliveries = this.stmt('SELECT * FROM deliveries WHERE signal_id = ? ORDER BY agent_id').all(
      id,
    ) as DeliveryRow[];
    return { ...signal, deliveries: deliveries.map(deliveryOf) };
  }

  private readSignal(id: string): SignalRecord | null {
    const row = this.stmt('SELECT * FROM signals WHERE id = ?').get(id) as SignalRow | undefined;
    return row ? signalOf(row) : null;
  }

  // Delivery to agents.

  /**
   * Needs no wait for ingests: it writes, so its COMMIT runs under FULL, and that fsync of the
   * WAL also covers any ingest batch it read from; nothing leaves here before it is on disk.
   */
  async takeDeliveries(agentId: string, now: string, limit: number): Promise<AgentSignal[]> {
    const at = isoTime(now);
    return this.db
      .transaction((): AgentSignal[] => {
        this.stmt(
          `UPDATE deliveries SET status = 'expired'
            WHERE agent_id = ? AND status IN ('queued', 'delivered') AND expires_at <= ?`,
        ).run(agentId, at);
        const rows = this.stmt(
          `SELECT d.signal_id, d.seq, d.expires_at, s.source_id, s.received_at, s.normalized
             FROM deliveries d JOIN signals s ON s.id = d.signal_id
            WHERE d.agent_id = ? AND d.status IN ('queued', 'delivered')
            ORDER BY d.seq LIMIT ?`,
        ).all(agentId, Math.max(0, Math.floor(limit))) as AgentSignalRow[];
        if (rows.length === 0) return [];
        // The rows are the first pending ones by seq, so the seq range names exactly them.
        this.stmt(
          `UPDATE deliveries SET status = 'delivered', delivered_at = COALESCE(delivered_at, ?), attempts = attempts + 1
            WHERE agent_id = ? AND status IN ('queued', 'delivered') AND seq BETWEEN ? AND ?`,
        ).run(at, agentId, rows[0]!.seq, rows[rows.length - 1]!.seq);
        return rows.map(agentSignalOf);
      })
      .immediate();
  }

  /** One process serves a data directory: it keeps its own sessions apart (`AgentSessions`). */
  async claimAgentSession(agentId: string): Promise<AgentSessionClaim | null> {
    let released = false;
    return {
      takeDeliveries: (now, limit) => {
        if (released) return Promise.reject(new Error(`the push session of agent ${agentId} is no longer held`));
        return this.takeDeliveries(agentId, now, limit);
      },
      onLost: () => undefined,
      release: async () => {
        released = true;
      },
    };
  }

  async agentSessionOpenElsewhere(): Promise<boolean> {
    return false;
  }

  async ackDelivery(agentId: string, signalId: string, ack: Ack, now: string): Promise<AckOutcome> {
    const at = isoTime(now);
    return this.db
      .transaction((): AckOutcome => {
        const row = this.stmt('SELECT * FROM deliveries WHERE signal_id = ? AND agent_id = ?').get(
          signalId,
          agentId,
        ) as DeliveryRow | undefined;
        if (!row) return { kind: 'not_found' };
        const delivery = deliveryOf(row);
        if (row.status === 'executed' || row.status === 'rejected' || row.status === 'failed') {
          return { kind: row.status === ack.status ? 'already_acked' : 'conflict', delivery };
        }
        if (row.status === 'expired' && row.delivered_at === null) return { kind: 'expired', delivery };
        if (row.status === 'queued') return { kind: row.expires_at <= at ? 'expired' : 'not_delivered', delivery };
        const afterExpiry = row.status === 'expired' || row.expires_at <= at;
        const updated = this.stmt(
          `UPDATE deliveries SET status = ?, acked_at = ?, message = ?, result = ?, acked_after_expiry = ?
            WHERE signal_id = ? AND agent_id = ? RETURNING *`,
        ).get(ack.status, at, ack.message, jsonText(ack.result), afterExpiry ? 1 : 0, signalId, agentId) as DeliveryRow;
        return { kind: 'acked', delivery: deliveryOf(updated) };
      })
      .immediate();
  }

  announceDeliveries(agentIds: string[]): void {
    this.notify(agentIds);
  }

  watchDeliveries(listener: (agentIds: string[]) => void): () => void {
    // Wrapped so the same function may be registered twice and each unsubscribe removes one.
    const entry = (agentIds: string[]) => listener(agentIds);
    this.listeners.add(entry);
    return () => {
      this.listeners.delete(entry);
    };
  }

  private notify(agentIds: string[]): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(agentIds);
      } catch {
        // A listener's failure is its own: the signals are committed whatever it does.
      }
    }
  }

  // Lists, deletions and token rotation (the dashboard's verbs).

  /** `table`'s rows newest first (created_at, then id), optionally of one account, a page at a time. */
  private listNewest<Row>(table: 'accounts' | 'sources' | 'agents', page: PageRequest & { accountId?: string }): Row[] {
    const where: string[] = [];
    const params: unknown[] = [];
    if (page.accountId !== undefined) {
      where.push('account_id = ?');
      params.push(page.accountId);
    }
    if (page.before !== undefined) {
      // An unknown cursor compares as NULL, so it answers nothing rather than the first page.
      where.push(`(created_at, id) < (SELECT created_at, id FROM ${table} WHERE id = ?)`);
      params.push(page.before);
    }
    params.push(rowsForPage(page));
    return this.stmt(
      `SELECT * FROM ${table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT ?`,
    ).all(...params) as Row[];
  }

  async listAccounts(page: PageRequest): Promise<RecordPage<Account>> {
    return recordPage(page, this.listNewest<AccountRow>('accounts', page).map(accountOf));
  }

  async listSources(filter: SourceFilter): Promise<RecordPage<Source>> {
    return recordPage(filter, this.listNewest<SourceRow>('sources', filter).map(sourceOf));
  }

  async listAgents(filter: AgentFilter): Promise<RecordPage<Agent>> {
    return recordPage(filter, this.listNewest<AgentRow>('agents', filter).map(agentOf));
  }

  async countSignalsPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]> {
    await this.ingests.whenDurable();
    // Times are kept as 'YYYY-MM-DDTHH:MM:SS.sssZ': the day is the first ten characters.
    return this.stmt(
      `SELECT substr(received_at, 1, 10) AS day,
              sum(CASE WHEN status = 'queued' THEN 1 ELSE 0 END) AS accepted,
              sum(CASE WHEN status = 'rejected' THEN 1 ELSE 0 END) AS rejected
         FROM signals
        WHERE account_id = ? AND received_at >= ? AND received_at < ?
        GROUP BY day ORDER BY day`,
    ).all(accountId, `${fromDay}T00:00:00.000Z`, `${dayAfter(toDay)}T00:00:00.000Z`) as DayCount[];
  }

  async rotateAgentToken(agentId: string, tokenHash: string): Promise<Agent | null> {
    const row = this.stmt('UPDATE agents SET token_hash = ? WHERE id = ? RETURNING *').get(tokenHash, agentId) as AgentRow | undefined;
    if (!row) return null;
    this.notify([agentId]);
    return agentOf(row);
  }

  async deleteAgent(agentId: string): Promise<DeleteAgentOutcome> {
    this.sourceCache.clear();
    const outcome = this.db
      .transaction((): DeleteAgentOutcome => {
        const agent = this.stmt('SELECT account_id FROM agents WHERE id = ?').get(agentId) as { account_id: string } | undefined;
        if (!agent) return { kind: 'not_found' };
        const routed = this.stmt(
          `SELECT id FROM sources WHERE account_id = ? AND EXISTS (SELECT 1 FROM json_each(sources.agent_ids) WHERE value = ?) ORDER BY id`,
        )
          .pluck()
          .all(agent.account_id, agentId) as string[];
        if (routed.length > 0) return { kind: 'routed', sourceIds: routed };
        // Requests checked against the account's sources before this commit are checked again,
        // so none routes to the agent once it is gone.
        this.stmt('UPDATE sources SET revision = revision + 1 WHERE account_id = ?').run(agent.account_id);
        this.stmt('DELETE FROM deliveries WHERE agent_id = ?').run(agentId);
        this.stmt('DELETE FROM agents WHERE id = ?').run(agentId);
        return { kind: 'deleted' };
      })
      .immediate();
    if (outcome.kind === 'deleted') this.notify([agentId]);
    return outcome;
  }

  async deleteSource(id: string): Promise<boolean> {
    this.sourceCache.clear();
    await this.ingests.whenDurable();
    return this.db
      .transaction((): boolean => {
        if (this.stmt('SELECT 1 FROM sources WHERE id = ?').get(id) === undefined) return false;
        this.stmt('DELETE FROM idempotency_keys WHERE source_id = ?').run(id);
        this.stmt('DELETE FROM deliveries WHERE signal_id IN (SELECT id FROM signals WHERE source_id = ?)').run(id);
        this.stmt('DELETE FROM signals WHERE source_id = ?').run(id);
        this.stmt('DELETE FROM sources WHERE id = ?').run(id);
        return true;
      })
      .immediate();
  }

  // Dashboard sign-ins.

  async createDashboardSession(session: DashboardSession): Promise<void> {
    this.db
      .transaction(() => {
        this.stmt('DELETE FROM dashboard_sessions WHERE expires_at <= ?').run(isoTime(session.createdAt));
        this.stmt('INSERT INTO dashboard_sessions (id_digest, admin_token_digest, created_at, expires_at) VALUES (?, ?, ?, ?)').run(
          session.idDigest,
          session.adminTokenDigest,
          isoTime(session.createdAt),
          isoTime(session.expiresAt),
        );
      })
      .immediate();
  }

  async getDashboardSession(idDigest: string): Promise<DashboardSession | null> {
    const row = this.stmt('SELECT * FROM dashboard_sessions WHERE id_digest = ?').get(idDigest) as
      | { id_digest: string; admin_token_digest: string; created_at: string; expires_at: string }
      | undefined;
    return row ? { idDigest: row.id_digest, adminTokenDigest: row.admin_token_digest, createdAt: row.created_at, expiresAt: row.expires_at } : null;
  }

  async deleteDashboardSession(idDigest: string): Promise<boolean> {
    return this.stmt('DELETE FROM dashboard_sessions WHERE id_digest = ?').run(idDigest).changes > 0;
  }

  private stmt(sql: string): Database.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
