import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { BackupError } from '../backup-error.js';
import { DeliveryListeners } from '../delivery-listeners.js';
import type { ExpiredDelivery } from '../records.js';
import type { Store } from '../store.js';
import { PostgresAccounts } from './accounts.js';
import { PostgresAgents } from './agents.js';
import { PostgresDashboardSessions } from './dashboard-sessions.js';
import { PostgresDeliveries } from './deliveries.js';
import { detachResults } from './detached-results.js';
import { PostgresIngest } from './ingest.js';
import { migratePostgres } from './migrate-postgres.js';
import { PostgresLeases } from './leases.js';
import { PostgresRisk } from './risk.js';
import { PostgresLedger } from './ledger.js';
import { PostgresNotifications } from './notifications.js';
import { SessionLocks } from './session-locks.js';
import { PostgresRetention } from './retention.js';
import { PostgresSettings } from './settings.js';
import { PostgresSignals } from './signals.js';
import { PostgresSources } from './sources.js';
import { ANSWER_TIMEOUT_MS, UnansweringServerGuard } from './unanswering-server.js';
import { PostgresUsage } from './usage.js';

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

/** How long `GET /healthz` waits for PostgreSQL before calling it unreachable. */
const REACHABILITY_TIMEOUT_MS = 3000;
/** How long the start waits for its first database connection. */
const START_CONNECT_TIMEOUT_MS = 10_000;
/** How long a request waits for a database connection before it is answered 503. */
const CONNECT_TIMEOUT_MS = 2500;

/**
 * The delivery pool's size for a main pool of `maxConnections`: what the agents cause (token
 * lookups, hand-outs, acks, presence, state) runs on connections of its own, so however many
 * agents poll and acknowledge, the inbound path's lookups and ingests never queue behind them
 * for a connection (in a burst by long-poll, 78 % of the answers came after 3 s that way).
 */
export function deliveryConnections(maxConnections: number): number {
  return Math.max(2, Math.floor(maxConnections / 2));
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
 * The PostgreSQL store: several instances may share one database. Each room of the store
 * (settings, accounts, usage, agents, sources, signals, deliveries, and the ingest, a
 * server-side function) is a class of its own file holding its SQL; this class owns the
 * connections (the pools, the push sessions' lock connection) and hands each room those it uses.
 */
export class PostgresStore implements Store {
  readonly kind = 'postgres' as const;
  /** Tells this instance's notifications from other instances'. */
  readonly instance = randomUUID();
  private readonly pool: pg.Pool;
  /** The agents' queries (see `deliveryConnections`). */
  private readonly deliveryPool: pg.Pool;
  /** One connection of its own for readiness probes, so probing never takes one from the request path. */
  private readonly probePool: pg.Pool;
  private readonly answerGuard: UnansweringServerGuard;
  private readonly deliveryAnswerGuard: UnansweringServerGuard;
  private readonly clientConfig: pg.ClientConfig;
  private readonly listeners = new DeliveryListeners();
  private readonly expiryListeners = new DeliveryListeners<ExpiredDelivery[]>();
  private scope: string;
  private closed = false;
  private readonly sessionLocks: SessionLocks;
  readonly settings: PostgresSettings;
  readonly accounts: PostgresAccounts;
  readonly usage: PostgresUsage;
  readonly agents: PostgresAgents;
  readonly sources: PostgresSources;
  readonly signals: PostgresSignals;
  readonly deliveries: PostgresDeliveries;
  readonly ingest: PostgresIngest;
  readonly retention: PostgresRetention;
  readonly dashboardSessions: PostgresDashboardSessions;
  readonly notifications: PostgresNotifications;
  readonly leases: PostgresLeases;
  readonly risk: PostgresRisk;
  readonly ledger: PostgresLedger;

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
    const scope = () => this.scope;
    const isClosed = () => this.closed;
    const onExpired = (expired: ExpiredDelivery[]) => this.expiryListeners.notify(expired);
    this.sessionLocks = new SessionLocks(this.clientConfig, scope, onExpired);
    // A host that accepts connections and never answers would otherwise hold a start, or a
    // request, for ever; a request waiting longer than this for a connection (new or pooled)
    // is answered 503 STORE_UNAVAILABLE, in time for a webhook sender that gives up after 3 s.
    this.pool = new pg.Pool({
      ...this.clientConfig,
      max: maxConnections,
      application_name: 'signalgate',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      // A server that accepts and never answers: no statement waits for ever.
      query_timeout: ANSWER_TIMEOUT_MS,
    });
    this.deliveryPool = new pg.Pool({
      ...this.clientConfig,
      max: deliveryConnections(maxConnections),
      application_name: 'signalgate-delivery',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: ANSWER_TIMEOUT_MS,
    });
    this.probePool = new pg.Pool({
      ...this.clientConfig,
      max: 1,
      application_name: 'signalgate-readiness',
      connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
      query_timeout: ANSWER_TIMEOUT_MS,
    });
    this.probePool.on('error', () => undefined);
    this.probePool.on('connect', (client) => client.on('error', () => undefined));
    this.answerGuard = new UnansweringServerGuard(this.pool, this.clientConfig);
    this.deliveryAnswerGuard = new UnansweringServerGuard(this.deliveryPool, this.clientConfig);
    for (const pool of [this.pool, this.deliveryPool]) {
      // Rows are not kept alive by pg after their answer is used (see detached-results.ts).
      detachResults(pool);
      // An idle connection that dies (server restart) is dropped by the pool; without a
      // listener its error would crash the process.
      pool.on('error', () => undefined);
      // So does one that dies while checked out (terminated by an operator, a failover, an idle
      // timeout): the query under way gets the error; the event, unheard, would end the process.
      pool.on('connect', (client) => client.on('error', () => undefined));
    }
    const notify = (agentIds: string[]) => this.listeners.notify(agentIds);
    this.settings = new PostgresSettings(this.pool);
    this.accounts = new PostgresAccounts(this.pool);
    this.usage = new PostgresUsage(this.pool);
    this.agents = new PostgresAgents(this.pool, this.deliveryPool, { scope, instance: this.instance }, notify);
    this.dashboardSessions = new PostgresDashboardSessions(this.pool);
    this.notifications = new PostgresNotifications(this.pool);
    this.leases = new PostgresLeases(this.pool);
    this.risk = new PostgresRisk(this.pool, { scope, instance: this.instance }, notify);
    this.ledger = new PostgresLedger(this.pool);
    this.sources = new PostgresSources(this.pool, maxConnections, isClosed);
    this.signals = new PostgresSignals(this.pool);
    this.retention = new PostgresRetention(this.pool);
    this.deliveries = new PostgresDeliveries(this.deliveryPool, this.sessionLocks, {
      sweepPool: this.pool,
      client: this.clientConfig,
      scope,
      instance: this.instance,
      isClosed,
      listeners: this.listeners,
      expiryListeners: this.expiryListeners,
    });
    this.ingest = new PostgresIngest(this.pool, { maxConnections, scope, instance: this.instance, isClosed, notify });
  }

  async migrate(): Promise<void> {
    // The start may wait longer for its first connection than a request does.
    const starting = new pg.Pool({
      ...this.clientConfig,
      max: 1,
      application_name: 'signalgate',
      connectionTimeoutMillis: START_CONNECT_TIMEOUT_MS,
    });
    starting.on('error', () => undefined);
    try {
      await migratePostgres(starting, this.schema);
      const { rows } = await starting.query<{ s: string | null }>('SELECT current_schema() AS s');
      this.scope = rows[0]?.s ?? this.scope;
    } finally {
      await starting.end();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([this.ingest.drained(), this.sources.drained()]);
    this.listeners.clear();
    this.expiryListeners.clear();
    await this.deliveries.stopListening();
    await this.sessionLocks.close();
    await this.answerGuard.close();
    await this.deliveryAnswerGuard.close();
    await Promise.all([this.pool.end(), this.deliveryPool.end(), this.probePool.end()]);
  }

  /** A round trip on a pooled connection, given a few seconds (a dead host may never answer). */
  async backup(): Promise<void> {
    throw new BackupError(
      'signalgate backup copies the embedded SQLite store; this service uses PostgreSQL (SIGNALGATE_DATABASE_URL), which is backed up with its own tools: ' +
        'pg_dump --format=custom --file=signalgate.dump "$SIGNALGATE_DATABASE_URL" (consistent while the server runs), restored with pg_restore',
    );
  }

  async reachabilityProblem(): Promise<string | null> {
    if (this.closed) return 'the store is closed';
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(
        () => resolve(`PostgreSQL did not answer within ${REACHABILITY_TIMEOUT_MS / 1000} s`),
        REACHABILITY_TIMEOUT_MS,
      );
    });
    const answered = this.probePool.query('SELECT 1').then(
      () => null,
      (error: unknown) => `PostgreSQL cannot be reached (${error instanceof Error ? error.message : String(error)})`,
    );
    try {
      return await Promise.race([answered, late]);
    } finally {
      clearTimeout(timer);
    }
  }
}
