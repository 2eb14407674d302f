import { statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createDirectory } from '../../files/create-directory.js';
import { createPrivateFile, PRIVATE_DIRECTORY_MODE } from '../../files/private-files.js';
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
import { SqliteAccounts } from './accounts.js';
import { copySqliteDatabase } from './sqlite-backup.js';
import { SqliteAgents } from './agents.js';
import { SqliteConnection } from './connection.js';
import { SqliteDashboardSessions } from './dashboard-sessions.js';
import { SqliteDeliveries } from './deliveries.js';
import { expireDueDeliveries } from './expire-deliveries.js';
import { SqliteIngest } from './ingest.js';
import { migrateSqlite } from './migrate-sqlite.js';
import { SqliteRetention } from './retention.js';
import { SqliteSettings } from './settings.js';
import { SqliteSignals } from './signals.js';
import { SqliteSources } from './sources.js';
import { SqliteUsage } from './usage.js';
import { SqliteWriteGroup } from './write-group.js';

export const SQLITE_FILE_NAME = 'signalgate.db';

/**
 * Below this much free space the store is reported unable to take writes: a batch of signals
 * appends a few pages to the WAL, and a checkpoint can need more.
 */
const MIN_FREE_BYTES = 1024 * 1024;

export interface SqliteStoreOptions {
  /** The directory holding `signalgate.db`; created when missing. */
  dataDir: string;
  /** How long a write waits for another process (e.g. the CLI) to release the file. */
  busyTimeoutMs?: number;
}

/**
 * Where the inbound thread checkpoints, the event loop's connection does only past this many
 * pages (16 MB). Measured in the soak (300 signals/s, one agent acknowledging, 40 s): with both
 * connections at 1,000, the event loop ran 142 of the 201 checkpoints, each an fsync of the WAL
 * and of the database file on the event loop (docs/decisions/0005-checkpoints.md).
 */
const STAND_IN_CHECKPOINT_PAGES = 4000;

/** Opens (creating when missing) the SQLite store; `migrate()` must run before use. */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  createDirectory(options.dataDir, PRIVATE_DIRECTORY_MODE);
  const file = join(options.dataDir, SQLITE_FILE_NAME);
  // Made 0600 before SQLite opens it: the WAL and shared-memory files it makes get its mode.
  createPrivateFile(file);
  return new SqliteStore(file, options.busyTimeoutMs ?? 5000);
}

/**
 * The embedded store: one connection, whose SQL lives with what it stores (settings, accounts,
 * usage, agents, sources, signals, deliveries, and the ingest that writes several of them).
 * better-sqlite3 is synchronous, so every statement runs on the event loop. Ingests are
 * group-committed and made durable off the event loop (`ingest.ts`); reads of what they write
 * wait for that. Every other write commits on its own under `synchronous = FULL`, whose fsync
 * also covers any batch still on its way.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private readonly connection: SqliteConnection;
  private readonly listeners = new DeliveryListeners();
  private readonly expiryListeners = new DeliveryListeners<ExpiredDelivery[]>();
  private readonly settings: SqliteSettings;
  private readonly accounts: SqliteAccounts;
  private readonly usage: SqliteUsage;
  private readonly agents: SqliteAgents;
  private readonly sources: SqliteSources;
  private readonly signals: SqliteSignals;
  private readonly deliveries: SqliteDeliveries;
  private readonly ingests: SqliteIngest;
  private readonly agentWrites: SqliteWriteGroup;
  private readonly retention: SqliteRetention;
  private readonly dashboardSessions: SqliteDashboardSessions;
  private closed = false;

  constructor(
    readonly path: string,
    busyTimeoutMs: number,
  ) {
    this.connection = new SqliteConnection(path, busyTimeoutMs);
    this.agentWrites = new SqliteWriteGroup(this.connection);
    // Reads of the log and usage never show a commit still waiting for the disk.
    const whenDurable = async () => {
      await Promise.all([this.ingests.whenDurable(), this.agentWrites.whenDurable()]);
    };
    this.settings = new SqliteSettings(this.connection);
    this.accounts = new SqliteAccounts(this.connection);
    this.usage = new SqliteUsage(this.connection, whenDurable);
    this.agents = new SqliteAgents(this.connection);
    this.sources = new SqliteSources(this.connection);
    this.signals = new SqliteSignals(this.connection, whenDurable);
    this.deliveries = new SqliteDeliveries(this.connection, this.agentWrites, (expired) => this.expiryListeners.notify(expired));
    this.retention = new SqliteRetention(this.connection);
    this.dashboardSessions = new SqliteDashboardSessions(this.connection);
    this.ingests = new SqliteIngest(
      this.connection,
      { sources: this.sources, signals: this.signals, deliveries: this.deliveries },
      (agentIds) => this.listeners.notify(agentIds),
    );
  }

  /** How many transactions have committed ingests: fewer than ingests when grouping works. */
  get ingestTransactions(): number {
    return this.ingests.transactions;
  }

  /** How many transactions have committed agents' writes (hand-outs, acks, presence). */
  get agentWriteTransactions(): number {
    return this.agentWrites.transactions;
  }

  /**
   * An inbound thread's connection, which commits the signals, now runs the checkpoints at
   * 1,000 pages: this one's commits checkpoint only past `STAND_IN_CHECKPOINT_PAGES`, should
   * the WAL grow that far without it (agents writing while no signal arrives). So no checkpoint
   * stops the event loop while signals arrive.
   */
  leaveCheckpointsToInboundThread(): void {
    this.connection.checkpointAfterPages(STAND_IN_CHECKPOINT_PAGES);
  }

  /** A pragma's value in force on this connection (journal_mode, synchronous, …). */
  pragma(name: string): unknown {
    return this.connection.db.pragma(name, { simple: true });
  }

  async migrate(): Promise<void> {
    migrateSqlite(this.connection.db);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await Promise.all([this.ingests.drain(), this.agentWrites.drain()]);
    } finally {
      this.connection.close();
    }
  }

  async backup(file: string): Promise<void> {
    copySqliteDatabase(this.connection.db, file);
  }

  /**
   * The file is opened once and stays open (a failing inbound thread is reported by the lane);
   * what can stop it taking writes is a full disk, so the free space under it is asked each time.
   */
  async reachabilityProblem(): Promise<string | null> {
    if (this.closed) return 'the store is closed';
    try {
      const { bavail, bsize } = await statfs(dirname(this.path));
      const free = bavail * bsize;
      if (free < MIN_FREE_BYTES) {
        return `the disk holding the SQLite store has ${free} bytes free (writes need at least ${MIN_FREE_BYTES}); free some space`;
      }
    } catch (error) {
      return `the SQLite store's directory cannot be examined (${error instanceof Error ? error.message : String(error)})`;
    }
    return null;
  }

  // Settings.

  async claimSetting(name: string, value: string): Promise<string> {
    return this.settings.claimSetting(name, value);
  }

  async getSetting(name: string): Promise<string | null> {
    return this.settings.getSetting(name);
  }

  async setSetting(name: string, value: string): Promise<void> {
    this.settings.setSetting(name, value);
  }

  async deleteSetting(name: string): Promise<void> {
    this.settings.deleteSetting(name);
  }

  // Accounts and usage.

  async createAccount(account: Account): Promise<void> {
    this.accounts.createAccount(account);
  }

  async getAccount(id: string): Promise<Account | null> {
    return this.accounts.getAccount(id);
  }

  async updateAccount(id: string, patch: AccountPatch): Promise<Account | null> {
    return this.accounts.updateAccount(id, patch);
  }

  getUsage(accountId: string, period: string): Promise<Usage | null> {
    return this.usage.getUsage(accountId, period);
  }

  async listAccounts(page: PageRequest): Promise<RecordPage<Account>> {
    return this.accounts.listAccounts(page);
  }

  countSignalsPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]> {
    return this.signals.countSignalsPerDay(accountId, fromDay, toDay);
  }

  // Agents.

  async createAgent(agent: Agent): Promise<void> {
    this.agents.createAgent(agent);
  }

  async getAgent(id: string): Promise<Agent | null> {
    return this.agents.getAgent(id);
  }

  async findAgentByTokenHash(tokenHash: string): Promise<AgentIdentity | null> {
    return this.agents.findAgentByTokenHash(tokenHash);
  }

  async listAgents(filter: AgentFilter): Promise<RecordPage<AgentEntry>> {
    return this.agents.listAgents(filter);
  }

  async rotateAgentToken(agentId: string, tokenHash: string): Promise<Agent | null> {
    const agent = this.agents.rotateAgentToken(agentId, tokenHash);
    // Its open sessions look again and close: the old token takes nothing more.
    if (agent !== null) this.listeners.notify([agentId]);
    return agent;
  }

  async deleteAgent(agentId: string): Promise<DeleteAgentOutcome> {
    const outcome = this.agents.deleteAgent(agentId);
    if (outcome.kind === 'deleted') {
      this.sources.forgetCached();
      this.listeners.notify([agentId]);
    }
    return outcome;
  }

  async saveAgentState(agentId: string, state: unknown, now: string): Promise<void> {
    await this.agentWrites.run(() => this.agents.saveAgentState(agentId, state, now));
  }

  async touchAgent(agentId: string, now: string): Promise<void> {
    await this.agentWrites.run(() => this.agents.touchAgent(agentId, now));
  }

  // Sources.

  async createSource(source: Source): Promise<void> {
    this.sources.createSource(source);
  }

  async getSource(id: string): Promise<Source | null> {
    return this.sources.getSource(id);
  }

  async findSourceByAuthKey(authKey: string): Promise<Source | null> {
    return this.sources.findSourceByAuthKey(authKey);
  }

  async updateSource(id: string, patch: SourcePatch, now: string): Promise<Source | null> {
    return this.sources.updateSource(id, patch, now);
  }

  async listSources(filter: SourceFilter): Promise<RecordPage<Source>> {
    return this.sources.listSources(filter);
  }

  async deleteSource(id: string): Promise<boolean> {
    return this.sources.deleteSource(id);
  }

  // Dashboard sign-ins.

  async createDashboardSession(session: DashboardSession): Promise<void> {
    this.dashboardSessions.createDashboardSession(session);
  }

  async getDashboardSession(idDigest: string): Promise<DashboardSession | null> {
    return this.dashboardSessions.getDashboardSession(idDigest);
  }

  async deleteDashboardSession(idDigest: string): Promise<boolean> {
    return this.dashboardSessions.deleteDashboardSession(idDigest);
  }

  // The inbound hot path.

  ingest(request: IngestRequest): Promise<IngestOutcome> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
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

  async countOpenDeliveries(): Promise<AgentQueueDepth[]> {
    return this.deliveries.countOpenDeliveries();
  }

  takeDeliveries(agentId: string, now: string, limit: number): Promise<AgentSignal[]> {
    return this.deliveries.takeDeliveries(agentId, now, limit);
  }

  async claimAgentSession(agentId: string, tokenHash: string): Promise<AgentSessionClaim | null> {
    return this.deliveries.claimAgentSession(agentId, tokenHash);
  }

  /** One process serves a data directory: no session is ever open elsewhere. */
  async agentSessionOpenElsewhere(): Promise<boolean> {
    return false;
  }

  ackDelivery(agentId: string, signalId: string, ack: Ack, now: string): Promise<AckOutcome> {
    return this.deliveries.ackDelivery(agentId, signalId, ack, now);
  }

  watchDeliveries(listener: (agentIds: string[]) => void): () => void {
    return this.listeners.add(listener);
  }

  announceDeliveries(agentIds: string[]): void {
    this.listeners.notify(agentIds);
  }

  watchExpiries(listener: (expired: ExpiredDelivery[]) => void): () => void {
    return this.expiryListeners.add(listener);
  }

  async expireDeliveries(now: string, limit: number): Promise<number> {
    const expired = expireDueDeliveries(this.connection, now, limit);
    if (expired.length > 0) this.expiryListeners.notify(expired);
    return expired.length;
  }

  // Retention.

  async pruneSignals(before: string, limit: number): Promise<number> {
    return this.retention.pruneSignals(before, limit);
  }

  async pruneIdempotencyKeys(before: string, limit: number): Promise<number> {
    return this.retention.pruneIdempotencyKeys(before, limit);
  }
}
