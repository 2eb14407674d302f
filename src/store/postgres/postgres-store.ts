import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { BackupError } from '../backup-error.js';
import type { AgentEntry } from '../agent-entry.js';
import { DeliveryListeners } from '../delivery-listeners.js';
import type { Account, Agent, AgentIdentity, DashboardSession, ExpiredDelivery, SignalWithDeliveries, Source, Usage } from '../records.js';
import type { AgentSignal } from '../../protocol/agent-signal.js';
import type {
  AccountPatch,
  Ack,
  AckOutcome,
  AgentFilter,
  AgentQueueDepth,
  AgentSessionClaim,
  DayCount,
  DeleteAgentOutcome,
  IngestOutcome,
  IngestRequest,
  LogEntryPage,
  PageRequest,
  RecordPage,
  SignalFilter,
  SignalPage,
  SourceFilter,
  SourcePatch,
  Store,
} from '../store.js';
import { PostgresAccounts } from './accounts.js';
import { PostgresAgents } from './agents.js';
import { PostgresDashboardSessions } from './dashboard-sessions.js';
import { agentsWithQueuedDeliveries, PostgresDeliveries } from './deliveries.js';
import { DeliveryChannel } from './delivery-channel.js';
import { detachResults } from './detached-results.js';
import { expireDueDeliveries } from './expire-deliveries.js';
import { PostgresIngest } from './ingest.js';
import { migratePostgres } from './migrate-postgres.js';
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
 * The PostgreSQL store: several instances may share one database. One connection pool, whose
 * SQL lives with what it stores (settings, accounts, usage, agents, sources, signals,
 * deliveries, and the ingest, a server-side function); this class owns the connections (the
 * pool, the push sessions' lock connection, the notification channel) and composes the rest.
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
  private channel: DeliveryChannel | null = null;
  private scope: string;
  private closed = false;
  private readonly sessionLocks: SessionLocks;
  private readonly settings: PostgresSettings;
  private readonly accounts: PostgresAccounts;
  private readonly usage: PostgresUsage;
  private readonly agents: PostgresAgents;
  private readonly sources: PostgresSources;
  private readonly signals: PostgresSignals;
  private readonly deliveries: PostgresDeliveries;
  private readonly ingests: PostgresIngest;
  private readonly retention: PostgresRetention;
  private readonly dashboardSessions: PostgresDashboardSessions;

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
    this.settings = new PostgresSettings(this.pool);
    this.accounts = new PostgresAccounts(this.pool);
    this.usage = new PostgresUsage(this.pool);
    this.agents = new PostgresAgents(this.pool, this.deliveryPool, { scope, instance: this.instance });
    this.dashboardSessions = new PostgresDashboardSessions(this.pool);
    this.sources = new PostgresSources(this.pool, maxConnections, isClosed);
    this.signals = new PostgresSignals(this.pool);
    this.retention = new PostgresRetention(this.pool);
    this.deliveries = new PostgresDeliveries(this.deliveryPool, this.sessionLocks, scope, onExpired);
    this.ingests = new PostgresIngest(this.pool, {
      maxConnections,
      scope,
      instance: this.instance,
      isClosed,
      notify: (agentIds) => this.listeners.notify(agentIds),
    });
  }

  async migrate(): Promise<void> {
    // The start may wait longer for its first connection than a request does.
    const starting = new pg.Pool({ ...this.clientConfig, max: 1, application_name: 'signalgate', connectionTimeoutMillis: START_CONNECT_TIMEOUT_MS });
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
    await Promise.all([this.ingests.drained(), this.sources.drained()]);
    this.listeners.clear();
    this.expiryListeners.clear();
    await this.channel?.stop();
    this.channel = null;
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
      timer = setTimeout(() => resolve(`PostgreSQL did not answer within ${REACHABILITY_TIMEOUT_MS / 1000} s`), REACHABILITY_TIMEOUT_MS);
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

  // Settings.

  claimSetting(name: string, value: string): Promise<string> {
    return this.settings.claimSetting(name, value);
  }

  getSetting(name: string): Promise<string | null> {
    return this.settings.getSetting(name);
  }

  setSetting(name: string, value: string): Promise<void> {
    return this.settings.setSetting(name, value);
  }

  deleteSetting(name: string): Promise<void> {
    return this.settings.deleteSetting(name);
  }

  // Accounts and usage.

  createAccount(account: Account): Promise<void> {
    return this.accounts.createAccount(account);
  }

  getAccount(id: string): Promise<Account | null> {
    return this.accounts.getAccount(id);
  }

  updateAccount(id: string, patch: AccountPatch): Promise<Account | null> {
    return this.accounts.updateAccount(id, patch);
  }

  getUsage(accountId: string, period: string): Promise<Usage | null> {
    return this.usage.getUsage(accountId, period);
  }

  listAccounts(page: PageRequest): Promise<RecordPage<Account>> {
    return this.accounts.listAccounts(page);
  }

  countSignalsPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]> {
    return this.signals.countSignalsPerDay(accountId, fromDay, toDay);
  }

  // Agents.

  createAgent(agent: Agent): Promise<void> {
    return this.agents.createAgent(agent);
  }

  getAgent(id: string): Promise<Agent | null> {
    return this.agents.getAgent(id);
  }

  findAgentByTokenHash(tokenHash: string): Promise<AgentIdentity | null> {
    return this.agents.findAgentByTokenHash(tokenHash);
  }

  listAgents(filter: AgentFilter): Promise<RecordPage<AgentEntry>> {
    return this.agents.listAgents(filter);
  }

  async rotateAgentToken(agentId: string, tokenHash: string): Promise<Agent | null> {
    const agent = await this.agents.rotateAgentToken(agentId, tokenHash);
    // This instance's open sessions look again and close: the old token takes nothing more.
    if (agent !== null) this.listeners.notify([agentId]);
    return agent;
  }

  async deleteAgent(agentId: string): Promise<DeleteAgentOutcome> {
    const outcome = await this.agents.deleteAgent(agentId);
    if (outcome.kind === 'deleted') this.listeners.notify([agentId]);
    return outcome;
  }

  saveAgentState(agentId: string, state: unknown, now: string): Promise<void> {
    return this.agents.saveAgentState(agentId, state, now);
  }

  touchAgent(agentId: string, now: string): Promise<void> {
    return this.agents.touchAgent(agentId, now);
  }

  // Sources.

  createSource(source: Source): Promise<void> {
    return this.sources.createSource(source);
  }

  getSource(id: string): Promise<Source | null> {
    return this.sources.getSource(id);
  }

  findSourceByAuthKey(authKey: string): Promise<Source | null> {
    return this.sources.findSourceByAuthKey(authKey);
  }

  updateSource(id: string, patch: SourcePatch, now: string): Promise<Source | null> {
    return this.sources.updateSource(id, patch, now);
  }

  listSources(filter: SourceFilter): Promise<RecordPage<Source>> {
    return this.sources.listSources(filter);
  }

  deleteSource(id: string): Promise<boolean> {
    return this.sources.deleteSource(id);
  }

  // Dashboard sign-ins.

  createDashboardSession(session: DashboardSession): Promise<void> {
    return this.dashboardSessions.createDashboardSession(session);
  }

  getDashboardSession(idDigest: string): Promise<DashboardSession | null> {
    return this.dashboardSessions.getDashboardSession(idDigest);
  }

  deleteDashboardSession(idDigest: string): Promise<boolean> {
    return this.dashboardSessions.deleteDashboardSession(idDigest);
  }

  // The inbound hot path.

  ingest(request: IngestRequest): Promise<IngestOutcome> {
    return this.ingests.ingest(request);
  }

  // The signal log.

  listSignals(filter: SignalFilter): Promise<SignalPage> {
    return this.signals.listSignals(filter);
  }

  listLogEntries(filter: SignalFilter): Promise<LogEntryPage> {
    return this.signals.listLogEntries(filter);
  }

  getSignal(id: string): Promise<SignalWithDeliveries | null> {
    return this.signals.getSignal(id);
  }

  // Delivery to agents.

  countOpenDeliveries(): Promise<AgentQueueDepth[]> {
    return this.deliveries.countOpenDeliveries();
  }

  takeDeliveries(agentId: string, now: string, limit: number): Promise<AgentSignal[]> {
    return this.deliveries.takeDeliveries(agentId, now, limit);
  }

  claimAgentSession(agentId: string, tokenHash: string): Promise<AgentSessionClaim | null> {
    return this.deliveries.claimAgentSession(agentId, tokenHash);
  }

  agentSessionOpenElsewhere(agentId: string): Promise<boolean> {
    return this.deliveries.agentSessionOpenElsewhere(agentId);
  }

  ackDelivery(agentId: string, signalId: string, ack: Ack, now: string): Promise<AckOutcome> {
    return this.deliveries.ackDelivery(agentId, signalId, ack, now);
  }

  announceDeliveries(agentIds: string[]): void {
    this.listeners.notify(agentIds);
  }

  watchExpiries(listener: (expired: ExpiredDelivery[]) => void): () => void {
    return this.expiryListeners.add(listener);
  }

  async expireDeliveries(now: string, limit: number): Promise<number> {
    const expired = await expireDueDeliveries(this.pool, now, limit);
    if (expired.length > 0) this.expiryListeners.notify(expired);
    return expired.length;
  }

  /** Listens, from the first watcher on, for other instances' notifications of new deliveries. */
  watchDeliveries(listener: (agentIds: string[]) => void): () => void {
    const unwatch = this.listeners.add(listener);
    if (!this.channel && !this.closed) {
      this.channel = new DeliveryChannel({
        client: { ...this.clientConfig, application_name: `signalgate-listen ${this.scope}`.slice(0, 63) },
        scope: () => this.scope,
        instance: this.instance,
        onAgents: (agentIds) => this.listeners.notify(agentIds),
        catchUp: agentsWithQueuedDeliveries,
      });
    }
    return unwatch;
  }

  /** Resolves once notifications from other instances can arrive (after `watchDeliveries`). */
  async listening(): Promise<void> {
    await this.channel?.listening();
  }

  /** How many times the notification connection has (re)connected. */
  get listenConnections(): number {
    return this.channel?.listenConnections ?? 0;
  }

  // Retention.

  pruneSignals(before: string, limit: number): Promise<number> {
    return this.retention.pruneSignals(before, limit);
  }

  pruneIdempotencyKeys(before: string, limit: number): Promise<number> {
    return this.retention.pruneIdempotencyKeys(before, limit);
  }
}
