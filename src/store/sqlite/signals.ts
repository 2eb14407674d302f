import { type LogEntry, OutcomeCounts, signalRecordOf } from '../log-entry.js';
import type { SignalRecord, SignalWithDeliveries } from '../records.js';
import type { DayCount, LogEntryPage, SignalFilter, SignalLog, SignalPage } from '../signal-log.js';
import { signalFilterIsEmpty } from '../signal-filter-empty.js';
import { rowsToRead, signalPage } from '../signal-page.js';
import { storedSignalStatus } from '../stored-signal-status.js';
import type { SqliteConnection } from './connection.js';
import type { DurableReads } from './durable-reads.js';
import { deliveryOf, jsonText, LOG_ENTRY_COLUMNS, logEntryOf, type DeliveryRow } from './sqlite-rows.js';

/**
 * Signals per day of an account (the dashboard's chart), exported for the test that reads its
 * plan; parameters @account, @from and @to (days, 'YYYY-MM-DD'), days with none left out. Read
 * from the per-day counter (`signals_per_day`, migrations/sqlite/012), which the ingest adds to
 * and deletions take from: at most one row per day asked, whatever the account's share of the log.
 */
export const SIGNALS_PER_DAY_SQL = `SELECT day, accepted, rejected FROM signals_per_day
  WHERE account_id = @account AND day >= @from AND day <= @to AND (accepted > 0 OR rejected > 0)
  ORDER BY day`;

/**
 * The signal log: the `signals` table. Entries are written by the ingest only (`ingest.ts`).
 * Each filter of the log has an index in log order (migrations/sqlite/005): a page reads about
 * as many rows as it shows, whatever the log's size.
 */
export class SqliteSignals implements SignalLog {
  constructor(
    private readonly connection: SqliteConnection,
    /**
     * Entries are written by the ingest, their deliveries' statuses by the agents' hand-outs and
     * acks: what is read is answered once it is on disk.
     */
    private readonly reads: DurableReads,
  ) {}

  async list(filter: SignalFilter): Promise<SignalPage> {
    const page = await this.listLogEntries(filter);
    return { signals: page.entries.map(signalRecordOf), next: page.next };
  }

  async listLogEntries(filter: SignalFilter): Promise<LogEntryPage> {
    if (signalFilterIsEmpty(filter)) return signalPage(filter, []);
    const { sql, params } = signalListQuery(filter);
    const entries = await this.reads.read(() => {
      const rows = this.connection
        .stmt(sql)
        .raw(true)
        .all(...params) as unknown[][];
      return this.withOutcomes(rows.map(logEntryOf));
    });
    return signalPage(filter, entries);
  }

  /** Duplicates count as neither accepted nor rejected. */
  async countPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]> {
    return (await this.reads.read(() =>
      this.connection.stmt(SIGNALS_PER_DAY_SQL).all({ account: accountId, from: fromDay, to: toDay }),
    )) as DayCount[];
  }

  async get(id: string): Promise<SignalWithDeliveries | null> {
    return this.reads.read(() => {
      const signal = this.readSignal(id);
      if (!signal) return null;
      const deliveries = this.connection
        .stmt('SELECT * FROM deliveries WHERE signal_id = ? ORDER BY agent_id')
        .all(id) as DeliveryRow[];
      return { ...signal, deliveries: deliveries.map(deliveryOf) };
    });
  }

  /** The entry as committed so far, without waiting for the disk (the ingest's replays read it in its transaction). */
  readSignal(id: string): SignalRecord | null {
    const row = this.connection.stmt(`SELECT ${LOG_ENTRY_COLUMNS} FROM signals s WHERE s.id = ?`).raw(true).get(id) as
      unknown[] | undefined;
    return row ? signalRecordOf(this.withOutcomes([logEntryOf(row)])[0]!) : null;
  }

  /**
   * The entries with the outcome of each accepted one counted from its deliveries: the
   * deliveries' statuses read by the primary key and counted here (grouping them in SQL took
   * twice as long, a temporary b-tree per page).
   */
  private withOutcomes(entries: LogEntry[]): LogEntry[] {
    const accepted = entries.filter((entry) => entry.status === 'accepted');
    if (accepted.length === 0) return entries;
    const rows = this.connection
      .stmt('SELECT d.signal_id, d.status FROM json_each(?) j JOIN deliveries d ON d.signal_id = j.value')
      .raw(true)
      .all(JSON.stringify(accepted.map((entry) => entry.id))) as [string, string][];
    const counts = new OutcomeCounts();
    for (const [signalId, status] of rows) counts.add(signalId, status);
    for (const entry of accepted) entry.outcome = counts.outcome(entry.id);
    return entries;
  }

  /**
   * Inserts a new entry; `normalized` is its signal as JSON text (null without one), `bodyDigest`
   * only for a signal accepted on a source with the duplicate guard on.
   */
  /** `risk`: the effective risk rules (JSON) the signal's agents get with it; null for none. */
  insertSignal(
    record: SignalRecord,
    normalized: string | null,
    bodyDigest: string | null,
    risk: string | null = null,
  ): void {
    this.connection
      .stmt(
        `INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, code, detail, param, errors,
                              content_type, raw_body, normalized, idempotency_key, quota_period, quota_used, quota_limit,
                              duplicate_of, body_digest, risk)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        record.id,
        record.sourceId,
        record.accountId,
        record.receivedAt,
        storedStatusValue(record),
        record.httpStatus,
        record.code,
        record.detail,
        record.param,
        jsonText(record.errors),
        record.contentType,
        record.rawBody,
        normalized,
        record.idempotencyKey,
        record.quota?.period ?? null,
        record.quota?.used ?? null,
        record.quota?.limit ?? null,
        record.duplicateOf,
        bodyDigest,
        risk,
      );
  }
}

/** The `status` column's value: 'queued' (the name it was created with) for accepted and duplicate entries. */
function storedStatusValue(record: SignalRecord): string {
  return record.status === 'rejected' ? 'rejected' : 'queued';
}

/**
 * The query of one page of the log (exported for the test that reads its plan): each filter
 * alone is served by an index in log order, so a page reads about as many rows as it shows.
 */
export function signalListQuery(filter: SignalFilter): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  if (filter.sourceId !== undefined) {
    where.push('s.source_id = ?');
    params.push(filter.sourceId);
  }
  if (filter.status !== undefined) {
    where.push(...storedSignalStatus(filter.status).map((condition) => `s.${condition}`));
  }
  if (filter.symbol !== undefined) {
    where.push("json_extract(s.normalized, '$.symbol') = ?");
    params.push(filter.symbol);
  }
  // With a source or a symbol, the outcome is checked on each of its signals in log order: the
  // deliveries carry neither, and walking all deliveries in that status for a rare symbol's
  // fetched a signal for each (docs/decisions/0006-signal-log-indexes.md).
  const bySignal = filter.outcome === undefined || filter.sourceId !== undefined || filter.symbol !== undefined;
  if (filter.outcome !== undefined && bySignal) {
    // The unary + keeps SQLite on the deliveries' primary key (the signal's one or two rows)
    // rather than the outcome index, which would read every delivery in that status.
    where.push('EXISTS (SELECT 1 FROM deliveries d WHERE d.signal_id = s.id AND +d.status = ?)');
    params.push(filter.outcome);
  }
  let sql: string;
  if (bySignal) {
    if (filter.before !== undefined) {
      // An unknown cursor compares as NULL, so it answers nothing rather than the first page.
      where.push('(s.received_at, s.id) < (SELECT received_at, id FROM signals WHERE id = ?)');
      params.push(filter.before);
    }
    // LIMIT CAST(? AS INTEGER), not `LIMIT ?`: see the hand-out in deliveries.ts.
    sql = `SELECT ${LOG_ENTRY_COLUMNS} FROM signals s ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
            ORDER BY s.received_at DESC, s.id DESC LIMIT CAST(? AS INTEGER)`;
  } else {
    // Driven by the deliveries in that status, in log order; a signal with several of them
    // is represented by the one of its lowest agent id, so it is listed once.
    const conditions = [
      'd.status = ?',
      `NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.signal_id = d.signal_id AND o.status = d.status AND o.agent_id < d.agent_id)`,
      ...where,
    ];
    params.unshift(filter.outcome!);
    if (filter.before !== undefined) {
      conditions.push('(d.received_at, d.signal_id) < (SELECT received_at, id FROM signals WHERE id = ?)');
      params.push(filter.before);
    }
    sql = `SELECT ${LOG_ENTRY_COLUMNS} FROM deliveries d JOIN signals s ON s.id = d.signal_id
            WHERE ${conditions.join(' AND ')}
            ORDER BY d.received_at DESC, d.signal_id DESC LIMIT CAST(? AS INTEGER)`;
  }
  params.push(rowsToRead(filter));
  return { sql, params };
}
