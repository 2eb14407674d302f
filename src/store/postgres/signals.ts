import type pg from 'pg';
import { type LogEntry, OutcomeCounts, signalRecordOf } from '../log-entry.js';
import type { SignalWithDeliveries } from '../records.js';
import type { DayCount, LogEntryPage, SignalFilter, SignalLog, SignalPage } from '../signal-log.js';
import { signalFilterIsEmpty } from '../signal-filter-empty.js';
import { rowsToRead, signalPage } from '../signal-page.js';
import { storedSignalStatus } from '../stored-signal-status.js';
import { deliveryOf, LOG_ENTRY_COLUMNS, logEntryOf, type DeliveryRow } from './postgres-rows.js';

/**
 * Signals per day of an account (the dashboard's chart), exported for the test that reads its
 * plan; parameters the account and the first and last days ('YYYY-MM-DD'), days with none left
 * out. Read from the per-day counter (`signals_per_day`, migrations/postgres/014), which the
 * ingest adds to and deletions take from: at most one row per day asked, whatever the account's
 * share of the log.
 */
export const SIGNALS_PER_DAY_SQL = `SELECT to_char(day, 'YYYY-MM-DD') AS day, accepted, rejected FROM signals_per_day
  WHERE account_id = $1 AND day BETWEEN $2::date AND $3::date AND (accepted > 0 OR rejected > 0)
  ORDER BY day`;

/**
 * The signal log: the `signals` table. Entries are written by `signalgate_ingest` only
 * (`ingest.ts`, migrations/postgres/functions.sql). Each filter of the log has an index in log
 * order (migrations/postgres/007): a page reads about as many rows as it shows, whatever the
 * log's size.
 */
export class PostgresSignals implements SignalLog {
  constructor(private readonly pool: pg.Pool) {}

  async list(filter: SignalFilter): Promise<SignalPage> {
    const page = await this.listLogEntries(filter);
    return { signals: page.entries.map(signalRecordOf), next: page.next };
  }

  async listLogEntries(filter: SignalFilter): Promise<LogEntryPage> {
    if (signalFilterIsEmpty(filter)) return signalPage(filter, []);
    const { sql, params } = signalListQuery(filter);
    const { rows } = await this.pool.query<unknown[]>({ text: sql, values: params, rowMode: 'array' });
    return signalPage(filter, await this.withOutcomes(rows.map(logEntryOf)));
  }

  /** Duplicates count as neither accepted nor rejected. */
  async countPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]> {
    const { rows } = await this.pool.query<DayCount>(SIGNALS_PER_DAY_SQL, [accountId, fromDay, toDay]);
    return rows;
  }

  async get(id: string): Promise<SignalWithDeliveries | null> {
    // The columns and reader of the log's pages: one reading of a stored signal for both.
    const { rows: signals } = await this.pool.query<unknown[]>({
      text: `SELECT ${LOG_ENTRY_COLUMNS} FROM signals s WHERE s.id = $1`,
      values: [id],
      rowMode: 'array',
    });
    if (!signals[0]) return null;
    const { rows } = await this.pool.query<DeliveryRow>(
      'SELECT * FROM deliveries WHERE signal_id = $1 ORDER BY agent_id',
      [id],
    );
    const signal = signalRecordOf(logEntryOf(signals[0]));
    const deliveries = rows.map(deliveryOf);
    if (signal.status === 'accepted') {
      // Counted as the pages count them, so one signal's outcome lists its statuses in the same order.
      const counts = new OutcomeCounts();
      for (const delivery of deliveries) counts.add(id, delivery.status);
      signal.outcome = counts.outcome(id);
    }
    return { ...signal, deliveries };
  }

  /** The entries with the outcome of each accepted one counted from its deliveries. */
  private async withOutcomes(entries: LogEntry[]): Promise<LogEntry[]> {
    const accepted = entries.filter((entry) => entry.status === 'accepted');
    if (accepted.length === 0) return entries;
    const { rows } = await this.pool.query<[string, string, number]>({
      text: `SELECT signal_id, status, count(*)::integer AS n FROM deliveries WHERE signal_id = ANY ($1::text[])
              GROUP BY signal_id, status`,
      values: [accepted.map((entry) => entry.id)],
      rowMode: 'array',
    });
    const counts = new OutcomeCounts();
    for (const [signalId, status, n] of rows) counts.add(signalId, status, n);
    for (const entry of accepted) entry.outcome = counts.outcome(entry.id);
    return entries;
  }
}

/**
 * The query of one page of the log (exported for the test that reads its plan): each filter
 * alone is served by an index in log order, so a page reads about as many rows as it shows.
 */
export function signalListQuery(filter: SignalFilter): { sql: string; params: unknown[] } {
  const where: string[] = [];
  const params: unknown[] = [];
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  if (filter.outcome !== undefined) return { sql: outcomeListSql(filter, param), params };
  if (filter.sourceId !== undefined) where.push(`s.source_id = ${param(filter.sourceId)}`);
  if (filter.status !== undefined)
    where.push(...storedSignalStatus(filter.status).map((condition) => `s.${condition}`));
  if (filter.symbol !== undefined) where.push(`s.symbol = ${param(filter.symbol)}`);
  if (filter.before !== undefined) where.push(`(s.received_at, s.id) < ${cursorKey(filter.before, param)}`);
  const sql = `SELECT ${LOG_ENTRY_COLUMNS} FROM signals s ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
            ORDER BY s.received_at DESC, s.id DESC LIMIT ${param(rowsToRead(filter))}`;
  return { sql, params };
}

/**
 * A page with an outcome, driven by the deliveries in that status in log order; a signal with
 * several of them is represented by the one of its lowest agent id, so it is listed once. Each
 * delivery carries its signal's source and symbol (migrations/postgres/016), so with either the
 * page walks one index (`deliveries_source_outcome_log`, `deliveries_symbol_outcome_log`) rather
 * than meeting the source's or symbol's signals with the outcome's deliveries: which of those two
 * is sparser in the newest part of the log decided the page's cost, and the planner could not
 * tell (a source's failed deliveries at 10 M merged 333 signals with 23,000 deliveries).
 */
function outcomeListSql(filter: SignalFilter, param: (value: unknown) => string): string {
  const conditions = [`d.status = ${param(filter.outcome)}`];
  if (filter.sourceId !== undefined) conditions.push(`d.source_id = ${param(filter.sourceId)}`);
  if (filter.symbol !== undefined) conditions.push(`d.symbol = ${param(filter.symbol)}`);
  conditions.push(
    'NOT EXISTS (SELECT 1 FROM deliveries o WHERE o.signal_id = d.signal_id AND o.status = d.status AND o.agent_id < d.agent_id)',
  );
  if (filter.status !== undefined)
    conditions.push(...storedSignalStatus(filter.status).map((condition) => `s.${condition}`));
  if (filter.before !== undefined) conditions.push(`(d.received_at, d.signal_id) < ${cursorKey(filter.before, param)}`);
  return `SELECT ${LOG_ENTRY_COLUMNS} FROM deliveries d JOIN signals s ON s.id = d.signal_id
            WHERE ${conditions.join(' AND ')}
            ORDER BY d.received_at DESC, d.signal_id DESC LIMIT ${param(rowsToRead(filter))}`;
}

/**
 * The log-order key of the cursor's signal, for a page older than it. An unknown cursor
 * compares as NULL, so it answers nothing rather than the first page.
 */
function cursorKey(before: string, param: (value: unknown) => string): string {
  return `(SELECT received_at, id FROM signals WHERE id = ${param(before)})`;
}
