import { statfs } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createDirectory } from '../../files/create-directory.js';
import { createPrivateFile, PRIVATE_DIRECTORY_MODE } from '../../files/private-files.js';
import { DeliveryListeners } from '../delivery-listeners.js';
import type { ExpiredDelivery } from '../records.js';
import type { Store } from '../store.js';
import { SqliteAccounts } from './accounts.js';
import { copySqliteDatabase } from './sqlite-backup.js';
import { SqliteAgents } from './agents.js';
import { SqliteConnection } from './connection.js';
import { SqliteDashboardSessions } from './dashboard-sessions.js';
import { SqliteDeliveries } from './deliveries.js';
import { DurableReads } from './durable-reads.js';
import { SqliteIngest } from './ingest.js';
import { migrateSqlite } from './migrate-sqlite.js';
import { SqliteLeases } from './leases.js';
import { SqliteLedger } from './ledger.js';
import { SqliteNotifications } from './notifications.js';
import { SqliteRetention } from './retention.js';
import { SqliteRisk } from './risk.js';
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
 * The embedded store: one connection, shared by the store's rooms (settings, accounts, usage,
 * agents, sources, signals, deliveries, and the ingest that writes several of them), each a
 * class of its own file holding its SQL.
 * better-sqlite3 is synchronous, so every statement runs on the event loop. Ingests are
 * group-committed and made durable off the event loop (`ingest.ts`), as are the agents' writes
 * (`write-group.ts`); reads of what they write answer once it is durable (`durable-reads.ts`).
 * Every other write commits on its own under `synchronous = FULL`, whose fsync
 * also covers any batch still on its way.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  private readonly connection: SqliteConnection;
  readonly settings: SqliteSettings;
  readonly accounts: SqliteAccounts;
  readonly usage: SqliteUsage;
  readonly agents: SqliteAgents;
  readonly sources: SqliteSources;
  readonly signals: SqliteSignals;
  readonly deliveries: SqliteDeliveries;
  readonly ingest: SqliteIngest;
  readonly retention: SqliteRetention;
  readonly dashboardSessions: SqliteDashboardSessions;
  readonly notifications: SqliteNotifications;
  readonly leases: SqliteLeases;
  readonly risk: SqliteRisk;
  readonly ledger: SqliteLedger;
  private readonly agentWrites: SqliteWriteGroup;
  private closed = false;

  constructor(
    readonly path: string,
    busyTimeoutMs: number,
  ) {
    this.connection = new SqliteConnection(path, busyTimeoutMs);
    this.agentWrites = new SqliteWriteGroup(this.connection);
    const listeners = new DeliveryListeners();
    const notify = (agentIds: string[]) => listeners.notify(agentIds);
    // Reads of what the groups write never show a commit still waiting for the disk.
    const reads = new DurableReads(() => Promise.all([this.ingest.whenDurable(), this.agentWrites.whenDurable()]));
    this.settings = new SqliteSettings(this.connection);
    this.accounts = new SqliteAccounts(this.connection);
    this.usage = new SqliteUsage(this.connection, reads);
    this.sources = new SqliteSources(this.connection);
    this.agents = new SqliteAgents(this.connection, this.agentWrites, reads, {
      forgetSources: () => this.sources.forgetCached(),
      notify,
    });
    this.signals = new SqliteSignals(this.connection, reads);
    this.deliveries = new SqliteDeliveries(
      this.connection,
      this.agentWrites,
      listeners,
      new DeliveryListeners<ExpiredDelivery[]>(),
    );
    this.retention = new SqliteRetention(this.connection);
    this.dashboardSessions = new SqliteDashboardSessions(this.connection);
    this.notifications = new SqliteNotifications(this.connection);
    this.leases = new SqliteLeases(this.connection);
    this.risk = new SqliteRisk(this.connection, notify);
    this.ledger = new SqliteLedger(this.connection, this.agentWrites, reads);
    this.ingest = new SqliteIngest(
      this.connection,
      { sources: this.sources, signals: this.signals, deliveries: this.deliveries },
      notify,
      () => this.closed,
    );
  }

  /** How many transactions have committed ingests: fewer than ingests when grouping works. */
  get ingestTransactions(): number {
    return this.ingest.transactions;
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
      await Promise.all([this.ingest.drain(), this.agentWrites.drain()]);
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
}
