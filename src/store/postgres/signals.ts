import type pg from 'pg';
import type { SignalWithDeliveries } from '../records.js';
import type { DayCount, SignalFilter, SignalPage } from '../store.js';
import { dayAfter } from '../day-after.js';
import { rowsToRead, signalPage } from '../signal-page.js';
import { deliveryOf, signalOf, type DeliveryRow, type SignalRow } from './postgres-rows.js';

/**
 * The signal log: the `signals` table. Entries are written by `signalgate_ingest` only
 * (`ingest.ts`, migrations/postgres/functions.sql).
 */
export class PostgresSignals {
  constructor(private readonly pool: pg.Pool) {}

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

  /** Counted from the index signals_account_days alone. */
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

  async getSignal(id: string): Promise<SignalWithDeliveries | null> {
    const { rows: signals } = await this.pool.query<SignalRow>('SELECT * FROM signals WHERE id = $1', [id]);
    if (!signals[0]) return null;
    const { rows } = await this.pool.query<DeliveryRow>(
      'SELECT * FROM deliveries WHERE signal_id = $1 ORDER BY agent_id',
      [id],
    );
    return { ...signalOf(signals[0]), deliveries: rows.map(deliveryOf) };
  }
}
