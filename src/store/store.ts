import type { Accounts } from './accounts.js';
import type { Agents } from './agents.js';
import type { DashboardSessions } from './dashboard-sessions.js';
import type { Deliveries } from './deliveries.js';
import type { Ingest } from './ingest.js';
import type { Leases } from './leases.js';
import type { Ledger } from './ledger.js';
import type { Notifications } from './notifications.js';
import type { QuotaUsage } from './quota-usage.js';
import type { Retention } from './retention.js';
import type { Risk } from './risk.js';
import type { Settings } from './settings.js';
import type { SignalLog } from './signal-log.js';
import type { Sources } from './sources.js';

// The rooms' own types, named here too so a caller takes the store's vocabulary from one place.
export type { AccountPatch } from './accounts.js';
export type { AgentFilter, DeleteAgentOutcome } from './agents.js';
export type { Ack, AckOutcome, AgentQueueDepth, AgentSessionClaim, SessionHandOut } from './deliveries.js';
export type { IngestOutcome, IngestRequest, IngestVerdict } from './ingest.js';
export type { LedgerFilter, LedgerRecordOutcome } from './ledger.js';
export type { PageRequest, RecordPage } from './record-page.js';
export type { DayCount, LogEntryPage, SignalFilter, SignalPage } from './signal-log.js';
export type { SourceFilter, SourcePatch } from './sources.js';

/**
 * The one storage interface: a bundle of rooms, one per concept (`store.accounts.create(…)`,
 * `store.deliveries.take(…)`), with the store's own lifecycle beside them. The embedded SQLite
 * store (default) and the PostgreSQL store implement each room in a file of its own; HTTP,
 * delivery and CLI code only ever see these types.
 *
 * Every method that changes state resolves only after the change is committed durably, so
 * an answer built from its result never acknowledges something a crash could lose.
 */
export interface Store {
  readonly kind: 'sqlite' | 'postgres';

  readonly settings: Settings;
  readonly accounts: Accounts;
  readonly usage: QuotaUsage;
  readonly agents: Agents;
  readonly sources: Sources;
  readonly dashboardSessions: DashboardSessions;
  readonly ingest: Ingest;
  readonly signals: SignalLog;
  readonly retention: Retention;
  readonly deliveries: Deliveries;
  readonly notifications: Notifications;
  readonly leases: Leases;
  readonly risk: Risk;
  readonly ledger: Ledger;

  /** Applies the numbered migrations not yet applied. Safe when several processes start at once. */
  migrate(): Promise<void>;
  close(): Promise<void>;

  /**
   * Why the store cannot be reached now (a sentence), or null when it answers: what
   * `GET /readyz` reports, so a load balancer stops sending signals an instance cannot store.
   * It takes no connection the requests would use (PostgreSQL probes on one of its own).
   */
  reachabilityProblem(): Promise<string | null>;

  /**
   * Writes a consistent copy of the whole store to `file` (which must not exist) while the
   * server may be writing: `signalgate backup`. Throws `BackupError` saying why it cannot, or,
   * on PostgreSQL, which of PostgreSQL's own tools to use instead.
   */
  backup(file: string): Promise<void>;
}
