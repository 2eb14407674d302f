import type { Outcome, SignalRecord, SignalWithDeliveries } from '../records.js';
import type { DayCount, SignalFilter, SignalPage } from '../store.js';
import { signalFilterIsEmpty } from '../signal-filter-empty.js';
import { rowsToRead, signalPage } from '../signal-page.js';
import { storedSignalStatus } from '../stored-signal-status.js';
import type { SqliteConnection } from './connection.js';
import { deliveryOf, jsonText, signalOf, type DeliveryRow, type SignalRow } from './sqlite-rows.js';

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
export class SqliteSignals {
  constructor(
    private readonly connection: SqliteConnection,
    /** Resolves when no committed ingest is still waiting for the disk. */
    private readonly whenDurable: () => Promise<void>,
  ) {}

  async listSignals(filter: SignalFilter): Promise<SignalPage> {
    await this.whenDurable();
    if (signalFilterIsEmpty(filter)) return signalPage(filter, []);
    const { sql, params } = signalListQuery(filter);
    const rows = this.connection.stmt(sql).all(...params) as SignalRow[];
    return signalPage(filter, this.withOutcomes(rows.map(signalOf)));
  }

  /** Duplicates count as neither accepted nor rejected. */
  async countSignalsPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]> {
    await this.whenDurable();
    return this.connection
      .stmt(SIGNALS_PER_DAY_SQL)
      .all({ account: accountId, from: fromDay, to: toDay }) as DayCount[];
  }

  async getSignal(id: string): Promise<SignalWithDeliveries | null> {
    await this.whenDurable();
    const signal = this.readSignal(id);
    if (!signal) return null;
    const deliveries = this.connection
      .stmt('SELECT * FROM deliveries WHERE signal_id = ? ORDER BY agent_id')
      .all(id) as DeliveryRow[];
    return { ...signal, deliveries: deliveries.map(deliveryOf) };
  }

  /** The entry as committed so far, without waiting for the disk (the ingest's replays read it in its transaction). */
  readSignal(id: string): SignalRecord | null {
    const row = this.connection.stmt('SELECT * FROM signals WHERE id = ?').get(id) as SignalRow | undefined;
    return row ? this.withOutcomes([signalOf(row)])[0]! : null;
  }

  /** The records with the outcome of each accepted one counted from its deliveries. */
  private withOutcomes(records: SignalRecord[]): SignalRecord[] {
    const accepted = records.filter((record) => record.status === 'accepted');
    if (accepted.length === 0) return records;
    const counts = this.connection
      .stmt(
        `SELECT signal_id, status, count(*) AS n FROM deliveries
          WHERE signal_id IN (SELECT value FROM json_each(?)) GROUP BY signal_id, status`,
      )
      .all(JSON.stringify(accepted.map((record) => record.id))) as { signal_id: string; status: string; n: number }[];
    const outcomes = new Map<string, Outcome>(accepted.map((record) => [record.id, {}]));
    for (const count of counts) outcomes.get(count.signal_id)![count.status as keyof Outcome] = count.n;
    return records.map((record) => (record.status === 'accepted' ? { ...record, outcome: outcomes.get(record.id)! } : record));
  }

  /**
   * Inserts a new entry; `normalized` is its signal as JSON text (null without one), `bodyDigest`
   * only for a signal accepted on a source with the duplicate guard on.
   */
  insertSignal(record: SignalRecord, normalized: string | null, bodyDigest: string | null): void {
    this.connection
      .stmt(
        `INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, code, detail, param, errors,
                              content_type, raw_body, normalized, idempotency_key, quota_period, quota_used, quota_limit,
                              duplicate_of, body_digest)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
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
  // fetched a signal for each (docs/performance.md, "The signal log at scale").
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
    sql = `SELECT s.* FROM signals s ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
            ORDER BY s.received_at DESC, s.id DESC LIMIT ?`;
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
    sql = `SELECT s.* FROM deliveries d JOIN signals s ON s.id = d.signal_id
            WHERE ${conditions.join(' AND ')}
            ORDER BY d.received_at DESC, d.signal_id DESC LIMIT ?`;
  }
  params.push(rowsToRead(filter));
  return { sql, params };
}
