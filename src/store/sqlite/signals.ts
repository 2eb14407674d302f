import type { SignalRecord, SignalWithDeliveries } from '../records.js';
import type { DayCount, SignalFilter, SignalPage } from '../store.js';
import { dayAfter } from '../day-after.js';
import { rowsToRead, signalPage } from '../signal-page.js';
import type { SqliteConnection } from './connection.js';
import { deliveryOf, jsonText, signalOf, type DeliveryRow, type SignalRow } from './sqlite-rows.js';

/** The signal log: the `signals` table. Entries are written by the ingest only (`ingest.ts`). */
export class SqliteSignals {
  constructor(
    private readonly connection: SqliteConnection,
    /** Resolves when no committed ingest is still waiting for the disk. */
    private readonly whenDurable: () => Promise<void>,
  ) {}

  async listSignals(filter: SignalFilter): Promise<SignalPage> {
    await this.whenDurable();
    const where: string[] = [];
    const params: unknown[] = [];
    if (filter.sourceId !== undefined) {
      where.push('source_id = ?');
      params.push(filter.sourceId);
    }
    if (filter.status !== undefined) {
      where.push('status = ?');
      params.push(filter.status);
    }
    if (filter.symbol !== undefined) {
      // The expression of the index signals_symbol_log, so that index serves it.
      where.push("json_extract(normalized, '$.symbol') = ?");
      params.push(filter.symbol);
    }
    if (filter.before !== undefined) {
      // An unknown cursor compares as NULL, so it answers nothing rather than the first page.
      where.push('(received_at, id) < (SELECT received_at, id FROM signals WHERE id = ?)');
      params.push(filter.before);
    }
    const sql = `SELECT * FROM signals ${where.length ? `WHERE ${where.join(' AND ')}` : ''}
                 ORDER BY received_at DESC, id DESC LIMIT ?`;
    params.push(rowsToRead(filter));
    const rows = this.connection.stmt(sql).all(...params) as SignalRow[];
    return signalPage(filter, rows.map(signalOf));
  }

  /** Counted from the index signals_account_days alone. */
  async countSignalsPerDay(accountId: string, fromDay: string, toDay: string): Promise<DayCount[]> {
    await this.whenDurable();
    // Times are kept as 'YYYY-MM-DDTHH:MM:SS.sssZ': the day is the first ten characters.
    return this.connection
      .stmt(
        `SELECT substr(received_at, 1, 10) AS day,
                sum(CASE WHEN status = 'queued' THEN 1 ELSE 0 END) AS accepted,
                sum(CASE WHEN status = 'rejected' THEN 1 ELSE 0 END) AS rejected
           FROM signals
          WHERE account_id = ? AND received_at >= ? AND received_at < ?
          GROUP BY day ORDER BY day`,
      )
      .all(accountId, `${fromDay}T00:00:00.000Z`, `${dayAfter(toDay)}T00:00:00.000Z`) as DayCount[];
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
    return row ? signalOf(row) : null;
  }

  insertSignal(record: SignalRecord): void {
    this.connection
      .stmt(
        `INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, code, detail, param, errors,
                              content_type, raw_body, normalized, idempotency_key, quota_period, quota_used, quota_limit)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        record.id,
        record.sourceId,
        record.accountId,
        record.receivedAt,
        record.status,
        record.httpStatus,
        record.code,
        record.detail,
        record.param,
        jsonText(record.errors),
        record.contentType,
        record.rawBody,
        jsonText(record.signal),
        record.idempotencyKey,
        record.quota?.period ?? null,
        record.quota?.used ?? null,
        record.quota?.limit ?? null,
      );
  }
}
