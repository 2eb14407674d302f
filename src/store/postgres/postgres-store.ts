import { randomUUID } from 'node:crypto';
import pg from 'pg';
import type { Account, Agent, AgentSignal, DashboardSession, SignalRecord, SignalWithDeliveries, Source, Usage } from '../records.js';
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
import { dayAfter } from '../day-after.js';
import { recordPage, rowsForPage } from '../record-page.js';
import { AgentSessionOpenError } from '../agent-session-open.js';
import { authKeyHash } from '../auth-key-hash.js';
import { isoTime, isoTimeOrNull } from '../iso-time.js';
import { OutcomeUnknownError } from '../outcome-unknown.js';
import { patchedSource } from '../patched-source.js';
import { rowsToRead, signalPage } from '../signal-page.js';
import type { IngestDone } from '../ingest-done.js';
import type { ItemResult } from '../item-result.js';
import { Batches } from './batches.js';
import { DELIVERY_CHANNEL, DeliveryChannel, deliveryPayloads } from './delivery-channel.js';
import { ingestDone, ingestItem, type IngestAnswer, type IngestItem } from './ingest-call.js';
import { migratePostgres } from './migrate-postgres.js';
import { SessionLocks } from './session-locks.js';
import { sessionLockKeySql, takeDeliveriesOn } from './take-deliveries.js';
import {
  accountOf,
  agentOf,
  deliveryOf,
  jsonParam,
  signalOf,
  sourceOf,
  textParam,
  type AccountRow,
  type AgentRow,
  type DeliveryRow,
  type SignalRow,
  type SourceRow,
} from './postgres-rows.js';

export interface PostgresStoreOptions {
  connectionString: string;
  /**
   * Keep every table in this schema (created when missing), e.g. to isolate tests. Lower-case
   * letters, digits and `_`. Absent: the connection's default search_path (usually `public`).
   */
  schema?: string | null;
  /** Pool size of this instance. */
  maxConnections?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** SQLSTATEs after which PostgreSQL has rolled the transaction back and a retry is safe. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 3;

type Queryable = pg.Pool | pg.PoolClient;

/** How long `GET /healthz` waits for PostgreSQL before calling it unreachable. */
const REACHABILITY_TIMEOUT_MS = 3000;

/**
 * Items per ingest batch. When a batch is resent isolated, each item is a subtransaction; above
 * 64 in one transaction PostgreSQL marks its snapshot data "overflowed", which slows every other
 * session's visibility checks.
 */
const MAX_BATCH = 50;

/** One fixed order of ids (UTF-16 code units), the same in every instance. */
function compareIds(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Opens the PostgreSQL store (a connection pool); `migrate()` must run before use. */
export function openPostgresStore(options: PostgresStoreOptions): PostgresStore {
  const schema = options.schema ?? null;
  if (schema !== null && !SCHEMA_NAME.test(schema)) {
    throw new Error(`schema name must match ${SCHEMA_NAME.source}: ${schema}`);
  }
  return new PostgresStore(options.connectionString, schema, options.maxConnections ?? 10);
}

/**
 * The PostgreSQL store: several instances may share one database. Ingests are group-committed:
 * those of one event-loop turn go to the server-side function `signalgate_ingest`
 * (migrations/postgres/002) in one call, one implicit transaction. The quota is charged by a
 * conditional upsert, idempotency keys are a primary key that concurrent repeats queue on, and
 * per-agent sequence numbers come from the agents' rows locked in id order, so they follow
 * commit order.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  /** Tells this instance's notifications from other instances'. */
  readonly instance = randomUUID();
  private readonly pool: pg.Pool;
  private readonly clientConfig: pg.ClientConfig;
  private readonly listeners = new Set<(agentIds: string[]) => void>();
  private channel: DeliveryChannel | null = null;
  private scope: string;
  private closed = false;
  private readonly ingests: Batches<IngestRequest, IngestDone>;
  private readonly lookups: Batches<string, Source | null>;
  private readonly sessionLocks: SessionLocks;

  constructor(
    connectionString: string,
    readonly schema: string | null,
    maxConnections: number,
  ) {
    this.clientConfig = {
      connectionString,
      // Set at connection start-up, so every pooled connection resolves names in the schema.
      ...(schema !== null && { options: `-c search_path=${schema}` }),
    };
    this.scope = schema ?? 'public';
    this.sessionLocks = new SessionLocks(this.clientConfig, () => this.scope);
    // A host that accepts connections and never answers would otherwise hold a start, or a
    // request, for ever.
    this.pool = new pg.Pool({ ...this.clientConfig, max: maxConnections, application_name: 'signalgate', connectionTimeoutMillis: 10_000 });
    // An idle connection that dies (server restart) is dropped by the pool; without a
    // listener its error would crash the process.
    this.pool.on('error', () => undefined);
    // So does one that dies while checked out (terminated by an operator, a failover, an idle
    // timeout): the query under way gets the error; the event, unheard, would end the process.
    this.pool.on('connect', (client) => client.on('error', () => undefined));
    // One batch per account in flight (the next waits here, growing, rather than at the
    // account's usage-row lock), and half the pool at most, so the other queries (source
    // lookups, polls, acks) still find a connection.
    this.ingests = new Batches((requests) => this.ingestBatch(requests), {
      maxBatch: MAX_BATCH,
      maxInFlight: Math.max(1, Math.floor(maxConnections / 2)),
      keyOf: (request) => request.accountId,
    });
    this.lookups = new Batches((hashes) => this.lookupSources(hashes), {
      maxBatch: 1000,
      maxInFlight: Math.max(1, Math.floor(maxConnections / 4)),
    });
  }

  async migrate(): Promise<void> {
    await migratePostgres(this.pool, this.schema);
    const { rows } = await this.pool.query<{ s: string | null }>('SELECT current_schema() AS s');
    this.scope = rows[0]?.s ?? this.scope;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.ingests.drained(), this.lookups.drained()]);
    this.listeners.clear();
    await this.channel?.stop();
    this.channel = null;
    await this.sessionLocks.close();
    await this.pool.end();
  }

  // Settings.

  async claimSetting(name: string, value: string): Promise<string> {
    // Two statements, not one: a CTE's snapshot might not see a row a rival committed meanwhile.
    await this.pool.query('INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING', [
      name,
      value,
    ]);
    const { rows } = await this.pool.query<{ value: string }>('SELECT value FROM settings WHERE name = $1', [name]);
    return rows[0]!.value;
  }

  async getSetting(name: string): Promise<string | null> {
    const { rows } = await this.pool.query<{ value: string }>('SELECT value FROM settings WHERE name = $1', [name]);
    return rows[0]?.value ?? null;
  }

  /** A round trip on a pooled connection, given a few seconds (a dead host may never answer). */
  async reachabilityProblem(): Promise<string | null> {
    if (this.closed) return 'the store is closed';
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`PostgreSQL did not answer within ${REACHABILITY_TIMEOUT_MS / 1000} s`), REACHABILITY_TIMEOUT_MS);
    });
    const answered = this.pool.query('SELECT 1').then(
      () => null,
      (error: unknown) => `PostgreSQL cannot be reached (${error instanceof Error ? error.message : String(error)})`,
    );
    try {
      return await Promise.race([answered, late]);
    } finally {
      clearTimeout(timer);
    }
  }

  async setSetting(name: string, value: string): Promise<void> {
    await this.pool.query(
      'INSERT INTO settings (name, value) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET value = excluded.value',
      [name, value],
    );
  }

  // Accounts and usage.

  async createAccount(account: Account): Promise<void> {
    await this.pool.query(
      'INSERT INTO accounts (id, name, monthly_signal_quota, created_at) VALUES ($1, $2, $3, $4)',
      [account.id, account.name, account.monthlySignalQuota, isoTime(account.createdAt)],
    );
  }

  async getAccount(id: string): Promise<Account | null> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
    return rows[0] ? accountOf(rows[0]) : null;
  }

  /**
   * One statement. `signalgate_ingest` reads the quota in the statement that charges, so every
   * charge made after this commit holds to the new quota. (A non-key update: it does not wait
   * for ingests holding key-share locks on the account.)
   */
  async updateAccount(id: string, patch: AccountPatch): Promise<Account | null> {
    const { rows } = await this.pool.query<AccountRow>(
      `UPDATE accounts SET name = COALESCE($1, name), monthly_signal_quota = COALESCE($2, monthly_signal_quota)
        WHERE id = $3 RETURNING *`,
      [patch.name ?? null, patch.monthlySignalQuota ?? null, id],
    );
    return rows[0] ? accountOf(rows[0]) : null;
  }

  async getUsage(accountId: string, period: string): Promise<Usage | null> {
    const { rows } = await this.pool.query<{ quota: number; used: number }>(
      `SELECT a.monthly_signal_quota AS quota, COALESCE(u.used, 0) AS used
         FROM accounts a LEFT JOIN usage u ON u.account_id = a.id AND u.period = $1
        WHERE a.id = $2`,
      [period, accountId],
    );
    return rows[0] ? { period, used: rows[0].used, limit: rows[0].quota } : null;
  }

  // Agents.

  async createAgent(agent: Agent): Promise<void> {
    await this.pool.query(
      `INSERT INTO agents (id, account_id, name, token_hash, created_at, last_seen_at, state)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [
        agent.id,
        agent.accountId,
        agent.name,
        agent.tokenHash,
        isoTime(agent.createdAt),
        isoTimeOrNull(agent.lastSeenAt),
        jsonParam(agent.state),
      ],
    );
  }

  async getAgent(id: string): Promise<Agent | null> {
    const { rows } = await this.pool.query<AgentRow>('SELECT * FROM agents WHERE id = $1', [id]);
    return rows[0] ? agentOf(rows[0]) : null;
  }

  async findAgentByTokenHash(tokenHash: string): Promise<Agent | null> {
    const { rows } = await this.pool.query<AgentRow>('SELECT * FROM agents WHERE token_hash = $1', [tokenHash]);
    return rows[0] ? agentOf(rows[0]) : null;
  }

  async saveAgentState(agentId: string, state: unknown, now: string): Promise<void> {
    await this.pool.query('UPDATE agents SET state = $1, last_seen_at = $2 WHERE id = $3', [
      jsonParam(state),
      isoTime(now),
      agentId,
    ]);
  }

  async touchAgent(agentId: string, now: string): Promise<void> {
    await this.pool.query('UPDATE agents SET last_seen_at = $1 WHERE id = $2', [isoTime(now), agentId]);
  }

  // Sources.

  async createSource(source: Source): Promise<void> {
    await this.pool.query(
      `INSERT INTO sources (id, account_id, name, auth_key, auth_key_hash, active, hmac_secret, agent_ids,
                            max_signal_age_seconds, created_at, revision)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [
        source.id,
        source.accountId,
        source.name,
        source.authKey,
        authKeyHash(source.authKey),
        source.active,
        source.hmacSecret,
        JSON.stringify(source.agentIds),
        source.maxSignalAgeSeconds,
        isoTime(source.createdAt),
        source.revision,
      ],
    );
  }

  async getSource(id: string): Promise<Source | null> {
    const { rows } = await this.pool.query<SourceRow>('SELECT * FROM sources WHERE id = $1', [id]);
    return rows[0] ? sourceOf(rows[0]) : null;
  }

  /**
   * Every call reads the database (nothing is cached, so a rotated key stops working at once on
   * every instance); the calls of one event-loop turn share one query.
   */
  async findSourceByAuthKey(authKey: string): Promise<Source | null> {
    if (this.closed) throw new Error('store is closed');
    return this.lookups.submit(authKeyHash(authKey));
  }

  private async lookupSources(hashes: string[]): Promise<ItemResult<Source | null>[]> {
    const { rows } = await this.pool.query<SourceRow & { auth_key_hash: string }>({
      name: 'signalgate-find-sources',
      text: 'SELECT * FROM sources WHERE auth_key_hash = ANY ($1::text[])',
      values: [[...new Set(hashes)]],
    });
    const found = new Map(rows.map((row) => [row.auth_key_hash, row]));
    return hashes.map((hash) => {
      const row = found.get(hash);
      return { ok: true, value: row ? sourceOf(row) : null };
    });
  }

  async updateSource(id: string, patch: SourcePatch): Promise<Source | null> {
    return this.transaction(async (client) => {
      // FOR UPDATE conflicts with the key-share lock an ingest takes on its source before it
      // compares revisions (migrations/postgres/005): the change waits for the ingests that
      // passed that comparison, and later ones wait for the change, then see the new revision.
      const { rows } = await client.query<SourceRow>('SELECT * FROM sources WHERE id = $1 FOR UPDATE', [id]);
      if (!rows[0]) return null;
      const next = patchedSource(sourceOf(rows[0]), patch);
      await client.query(
        `UPDATE sources SET name = $1, auth_key = $2, auth_key_hash = $3, active = $4, hmac_secret = $5,
                            agent_ids = $6, max_signal_age_seconds = $7, revision = $8
          WHERE id = $9`,
        [
          next.name,
          next.authKey,
          authKeyHash(next.authKey),
          next.active,
          next.hmacSecret,
          JSON.stringify(next.agentIds),
          next.maxSignalAgeSeconds,
          next.revision,
          id,
        ],
      );
      if (next.maxSignalAgeSeconds !== rows[0].max_signal_age_seconds) {
        await client.query(
          `UPDATE deliveries d SET expires_at = s.received_at + make_interval(secs => $2)
             FROM signals s
            WHERE s.id = d.signal_id AND s.source_id = $1 AND d.status IN ('queued', 'delivered')`,
          [id, next.maxSignalAgeSeconds],
        );
      }
      return next;
    });
  }

  // The inbound hot path.

  async ingest(request: IngestRequest): Promise<IngestOutcome> {
    for (let attempt = 1; ; attempt++) {
      if (this.closed) throw new Error('store is closed');
      try {
        return (await this.ingests.submit(request)).outcome;
      } catch (error) {
        // A deadlock or serialization failure rolled this request back (alone or with its
        // batch): nothing of it happened, so it is sent again.
        const code = (error as { code?: unknown }).code;
        if (typeof code === 'string' && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS) continue;
        throw error;
      }
    }
  }

  /**
   * One call of `signalgate_ingest` (one implicit transaction, one round trip) for the batch;
   * only when the database refuses it is the batch sent again with every item isolated.
   * Items go in account order, arrival order within an account, so concurrent batches take
   * the accounts' usage rows in the same order and do not deadlock on them; an agent belongs to
   * one account, so its deliveries keep arrival order. Listeners hear of new deliveries once
   * the call (and so the COMMIT) returned.
   */
  private async ingestBatch(requests: IngestRequest[]): Promise<ItemResult<IngestDone>[]> {
    const results: ItemResult<IngestDone>[] = new Array<ItemResult<IngestDone>>(requests.length);
    const order = requests.map((_, i) => i).sort((x, y) => compareIds(requests[x]!.accountId, requests[y]!.accountId));
    const items: IngestItem[] = [];
    const positions: number[] = [];
    for (const i of order) {
      try {
        items.push(ingestItem(requests[i]!, items.length));
        positions.push(i);
      } catch (error) {
        results[i] = { ok: false, error };
      }
    }
    if (items.length > 0) {
      const batch = JSON.stringify(items);
      let answers: IngestAnswer[];
      try {
        answers = await this.callIngest(batch, false);
      } catch (error) {
        // The server refused the call and rolled all of it back: send the batch again, each
        // item in its own subtransaction, so what failed fails alone.
        if (error instanceof OutcomeUnknownError) throw error;
        answers = await this.callIngest(batch, true);
      }
      const agentIds = new Set<string>();
      for (const answer of answers) {
        const i = positions[answer.n];
        if (i === undefined) continue;
        try {
          const done = ingestDone(requests[i]!, answer);
          for (const id of done.agentIds) agentIds.add(id);
          results[i] = { ok: true, value: done };
        } catch (error) {
          // An item the call answered as failed was rolled back; one it answered as done was
          // committed, so if its answer cannot be read, its outcome is unknown.
          results[i] = { ok: false, error: answer.ok ? new OutcomeUnknownError(error) : error };
        }
      }
      // The call committed: an item it did not answer may have been stored.
      for (const i of positions) {
        results[i] ??= { ok: false, error: new OutcomeUnknownError(new Error('signalgate_ingest gave no answer for this item')) };
      }
      // After COMMIT: this process's listeners hear it now, other instances through NOTIFY.
      if (agentIds.size > 0) this.notify([...agentIds].sort());
    }
    return results;
  }

  /**
   * One call of `signalgate_ingest` in its own implicit transaction. It fails plainly only when
   * nothing can have been committed: no connection was had, or the server answered the call
   * with an error (it rolled the call back). Any other failure once the call was sent (the
   * connection lost, the session terminated: SQLSTATE classes 08 and 57) may have come after
   * the COMMIT, so the outcome is unknown (`OutcomeUnknownError`).
   */
  private async callIngest(batch: string, isolate: boolean): Promise<IngestAnswer[]> {
    const client = await this.pool.connect();
    let result: pg.QueryResult<{ r: IngestAnswer[] }>;
    try {
      result = await client.query<{ r: IngestAnswer[] }>({
        name: isolate ? 'signalgate-ingest-isolated' : 'signalgate-ingest',
        text: `SELECT signalgate_ingest($1, $2, $3, ${isolate}) AS r`,
        values: [batch, this.scope, this.instance],
      });
    } catch (error) {
      const refused = error instanceof pg.DatabaseError && error.code !== undefined && !/^(08|57)/.test(error.code);
      // A connection that failed is not handed out again.
      client.release(refused ? undefined : (error as Error));
      throw refused ? error : new OutcomeUnknownError(error);
    }
    client.release();
    return result.rows[0]?.r ?? [];
  }

  // The signal log.

  async listSignals(filter: SignalFilter): Promise<SignalPage> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.sourceId !== undefined) {
      params.push(filter.sourceId);
      where.push(`source_id = $${params.length}`);
    }
    if (filter.status !== undefined) {
      params.push(filter.status);
      where.push(`status = $${params.length}`);
    }
    if (filter.symbol !== undefined) {
      // The expression of the index signals_symbol_log, so that index serves it.
      params.push(filter.symbol);
      where.push(`substring(normalized::text FROM '"symbol":"([^"]*)"') = $${params.length}`);
    }
    if (filter.before !== undefined) {
      // An unknown cursor compares as NULL, so it answers nothing rather than the first page.
      params.push(filter.before);
      where.push(`(received_at, id) < (SELECT received_at, id FROM signals WHERE id = $${params.length})`);
    }
    params.push(rowsToRead(filter));
    const { rows } = await this.pool.query<SignalRow>(
      `SELECT * FROM signals ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
        ORDER BY received_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return signalPage(filter, rows.map(signalOf));
  }

  async getSignal(id: string): Promise<SignalWithDeliveries | null> {
    const signal = await this.readSignal(this.pool, id);
    if (!signal) return null;
    const { rows } = await this.pool.query<DeliveryRow>(
      'SELECT * FROM deliveries WHERE signal_id = $1 ORDER BY agent_id',
      [id],
    );
    return { ...signal, deliveries: rows.map(deliveryOf) };
  }

  private async readSignal(db: Queryable, id: string): Promise<SignalRecord | null> {
    const { rows } = await db.query<SignalRow>('SELECT * FROM signals WHERE id = $1', [id]);
    return rows[0] ? signalOf(rows[0]) : null;
  }

  // Delivery to agents.

  async takeDeliveries(agentId: string, now: string, limit: number): Promise<AgentSignal[]> {
    const signals = await takeDeliveriesOn(this.pool, 'poll', this.scope, agentId, now, limit);
    if (signals === null) throw new AgentSessionOpenError(agentId);
    return signals;
  }

  claimAgentSession(agentId: string): Promise<AgentSessionClaim | null> {
    return this.sessionLocks.claim(agentId);
  }

  async agentSessionOpenElsewhere(agentId: string): Promise<boolean> {
    // A shared hold taken and given back at once: it fails only beside a session's hold.
    const { rows } = await this.pool.query<{ free: boolean }>(
      `SELECT pg_try_advisory_xact_lock_shared(${sessionLockKeySql('$1', '$2')}) AS free`,
      [agentId, this.scope],
    );
    return !rows[0]?.free;
  }

  async ackDelivery(agentId: string, signalId: string, ack: Ack, now: string): Promise<AckOutcome> {
    // Conditional update first: of two racing acks exactly one matches; the other classifies below.
    const { rows: updated } = await this.pool.query<DeliveryRow>(
      `UPDATE deliveries SET status = $3, acked_at = $4, message = $5, result = $6,
                             acked_after_expiry = (status = 'expired' OR expires_at <= $4)
        WHERE signal_id = $1 AND agent_id = $2
          AND (status = 'delivered' OR (status = 'expired' AND delivered_at IS NOT NULL))
       RETURNING *`,
      [signalId, agentId, ack.status, isoTime(now), textParam(ack.message), jsonParam(ack.result)],
    );
    if (updated[0]) return { kind: 'acked', delivery: deliveryOf(updated[0]) };
    const { rows } = await this.pool.query<DeliveryRow>(
      'SELECT * FROM deliveries WHERE signal_id = $1 AND agent_id = $2',
      [signalId, agentId],
    );
    const row = rows[0];
    if (!row) return { kind: 'not_found' };
    const delivery = deliveryOf(row);
    if (row.status === 'expired') return { kind: 'expired', delivery };
    if (row.status === 'queued') return { kind: row.expires_at.getTime() <= Date.parse(now) ? 'expired' : 'not_delivered', delivery };
    return { kind: row.status === ack.status ? 'already_acked' : 'conflict', delivery };
  }

  announceDeliveries(agentIds: string[]): void {
    this.notify(agentIds);
  }

  watchDeliveries(listener: (agentIds: string[]) => void): () => void {
    const entry = (agentIds: string[]) => listener(agentIds);
    this.listeners.add(entry);
    if (!this.channel && !this.closed) {
      this.channel = new DeliveryChannel({
        client: { ...this.clientConfig, application_name: `signalgate-listen ${this.scope}`.slice(0, 63) },
        scope: () => this.scope,
        instance: this.instance,
        onAgents: (agentIds) => this.notify(agentIds),
        catchUp: async (client) => {
          const { rows } = await client.query<{ agent_id: string }>(
            "SELECT DISTINCT agent_id FROM deliveries WHERE status = 'queued' ORDER BY agent_id",
          );
          return rows.map((row) => row.agent_id);
        },
      });
    }
    return () => {
      this.listeners.delete(entry);
    };
  }

  /** Resolves once notifications from other instances can arrive (after `watchDeliveries`). */
  async listening(): Promise<void> {
    await this.channel?.listening();
  }

  // Lists, deletions and token rotation (the dashboard's verbs).

  /** `table`'s rows newest first (created_at, then id), optionally of one account, a page at a time. */
  private async listNewest<Row extends pg.QueryResultRow>(
    table: 'accounts' | 'sources' | 'agents',
    page: PageRequest & { accountId?: string },
  ): Promise<Row[]> {
    const where: string[] = [];
    const params: unknown[] = [];
    if (page.accountId !== undefined) {
      params.push(page.accountId);
      where.push(`account_id = $${params.length}`);
    }
    if (page.before !== undefined) {
      // An unknown cursor compares as NULL, so it answers nothing rather than the first page.
      params.push(page.before);
      where.push(`(created_at, id) < (SELECT created_at, id FROM ${table} WHERE id = $${params.length})`);
    }
    params.push(rowsForPage(page));
    const { rows } = await this.pool.query<Row>(
      `SELECT * FROM ${table} ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
      params,
    );
    return rows;
  }

  async listAccounts(page: PageRequest): Promise<RecordPage<Account>> {
    return recordPage(page, (await this.listNewest<AccountRow>('accounts', page)).map(accountOf));
  }

  async listSources(filter: SourceFilter): Promise<RecordPage<Source>> {
    return recordPage(filter, (await this.listNewest<SourceRow>('sources', filter)).map(sourceOf));
  }

  async listAgents(filter: AgentFilter): Promise<RecordPage<Agent>> {
    return recordPage(filter, (await this.listNewest<AgentRow>('agents', filter)).map(agentOf));
  }

  async countSignalsPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]> {
    const { rows } = await this.pool.query<DayCount>(
      `SELECT to_char(received_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day,
              count(*) FILTER (WHERE status = 'queued')::integer AS accepted,
              count(*) FILTER (WHERE status = 'rejected')::integer AS rejected
         FROM signals
        WHERE account_id = $1 AND received_at >= $2::timestamptz AND received_at < $3::timestamptz
        GROUP BY day ORDER BY day`,
      [accountId, `${fromDay}T00:00:00.000Z`, `${dayAfter(toDay)}T00:00:00.000Z`],
    );
    return rows;
  }

  async rotateAgentToken(agentId: string, tokenHash: string): Promise<Agent | null> {
    const row = await this.transaction(async (client) => {
      const { rows } = await client.query<AgentRow>('UPDATE agents SET token_hash = $1 WHERE id = $2 RETURNING *', [tokenHash, agentId]);
      if (rows[0]) await this.notifyOthers(client, [agentId]);
      return rows[0] ?? null;
    });
    if (row === null) return null;
    this.notify([agentId]);
    return agentOf(row);
  }

  async deleteAgent(agentId: string): Promise<DeleteAgentOutcome> {
    const outcome = await this.transaction(async (client): Promise<DeleteAgentOutcome> => {
      const { rows } = await client.query<{ account_id: string }>('SELECT account_id FROM agents WHERE id = $1 FOR UPDATE', [agentId]);
      const agent = rows[0];
      if (!agent) return { kind: 'not_found' };
      // Locks the account's sources, against requests being committed on them meanwhile, and
      // moves their revision: a request checked before this commit is checked again, so none
      // routes to the agent once it is gone.
      const { rows: sources } = await client.query<{ id: string; routed: boolean }>(
        `UPDATE sources SET revision = revision + 1 WHERE account_id = $1
         RETURNING id, EXISTS (SELECT 1 FROM json_array_elements_text(agent_ids) AS a WHERE a = $2) AS routed`,
        [agent.account_id, agentId],
      );
      const routed = sources.filter((s) => s.routed).map((s) => s.id).sort(compareIds);
      // Thrown, so the revisions moved above roll back: nothing changes.
      if (routed.length > 0) throw new RoutedAgent(routed);
      await client.query('DELETE FROM deliveries WHERE agent_id = $1', [agentId]);
      await client.query('DELETE FROM agents WHERE id = $1', [agentId]);
      await this.notifyOthers(client, [agentId]);
      return { kind: 'deleted' };
    }).catch((error: unknown) => {
      if (error instanceof RoutedAgent) return { kind: 'routed' as const, sourceIds: error.sourceIds };
      throw error;
    });
    if (outcome.kind === 'deleted') this.notify([agentId]);
    return outcome;
  }

  async deleteSource(id: string): Promise<boolean> {
    return this.transaction(async (client) => {
      // Locked first: requests being committed on the source finish before, later ones find no source.
      const { rows } = await client.query('SELECT id FROM sources WHERE id = $1 FOR UPDATE', [id]);
      if (rows.length === 0) return false;
      await client.query('DELETE FROM idempotency_keys WHERE source_id = $1', [id]);
      await client.query('DELETE FROM deliveries WHERE signal_id IN (SELECT id FROM signals WHERE source_id = $1)', [id]);
      await client.query('DELETE FROM signals WHERE source_id = $1', [id]);
      await client.query('DELETE FROM sources WHERE id = $1', [id]);
      return true;
    });
  }

  /** Wakes the watchers of `agentIds` in the other instances on this database, at this transaction's commit. */
  private async notifyOthers(client: pg.PoolClient, agentIds: string[]): Promise<void> {
    for (const payload of deliveryPayloads(this.scope, this.instance, agentIds)) {
      await client.query('SELECT pg_notify($1, $2)', [DELIVERY_CHANNEL, payload]);
    }
  }

  // Dashboard sign-ins.

  async createDashboardSession(session: DashboardSession): Promise<void> {
    await this.transaction(async (client) => {
      await client.query('DELETE FROM dashboard_sessions WHERE expires_at <= $1', [isoTime(session.createdAt)]);
      await client.query('INSERT INTO dashboard_sessions (id_digest, admin_token_digest, created_at, expires_at) VALUES ($1, $2, $3, $4)', [
        session.idDigest,
        session.adminTokenDigest,
        isoTime(session.createdAt),
        isoTime(session.expiresAt),
      ]);
    });
  }

  async getDashboardSession(idDigest: string): Promise<DashboardSession | null> {
    const { rows } = await this.pool.query<{ id_digest: string; admin_token_digest: string; created_at: Date; expires_at: Date }>(
      'SELECT * FROM dashboard_sessions WHERE id_digest = $1',
      [idDigest],
    );
    const row = rows[0];
    return row
      ? { idDigest: row.id_digest, adminTokenDigest: row.admin_token_digest, createdAt: row.created_at.toISOString(), expiresAt: row.expires_at.toISOString() }
      : null;
  }

  async deleteDashboardSession(idDigest: string): Promise<boolean> {
    const { rowCount } = await this.pool.query('DELETE FROM dashboard_sessions WHERE id_digest = $1', [idDigest]);
    return (rowCount ?? 0) > 0;
  }

  /** How many times the notification connection has (re)connected. */
  get listenConnections(): number {
    return this.channel?.listenConnections ?? 0;
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

  /**
   * Runs `work` in one transaction on one pooled connection. Deadlock and serialization
   * failures (rolled back by PostgreSQL, so nothing happened) are retried; any other error,
   * including a failed COMMIT whose fate is unknown, is thrown to the caller.
   */
  private async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const client = await this.pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        try {
          const result = await work(client);
          await client.query('COMMIT');
          return result;
        } catch (error) {
          await client.query('ROLLBACK').catch((rollbackError: unknown) => {
            broken = rollbackError instanceof Error ? rollbackError : new Error(String(rollbackError));
          });
          throw error;
        }
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (typeof code === 'string' && RETRYABLE.has(code) && attempt < MAX_ATTEMPTS && !broken) continue;
        throw error;
      } finally {
        client.release(broken);
      }
    }
  }
}

/** Ends a deletion's transaction (rolled back) when a source routes to the agent by id. */
class RoutedAgent extends Error {
  constructor(readonly sourceIds: string[]) {
    super('a source routes to the agent');
  }
}
