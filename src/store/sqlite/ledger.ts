import type { LedgerFunding } from '../../ledger/ledger-funding.js';
import type { LedgerFill } from '../../ledger/ledger-trade.js';
import type { RecordedFill, RecordedFunding } from '../../ledger/recorded-fill.js';
import { isoTime } from '../iso-time.js';
import type { Ledger, LedgerFilter, LedgerRecordOutcome } from '../ledger.js';
import {
  ledgerWhere,
  recordedFillOf,
  recordedFundingOf,
  type LedgerFillRow,
  type LedgerFundingRow,
} from '../ledger-rows.js';
import type { SqliteConnection } from './connection.js';

/** The ledger's fills and funding payments: the `ledger_fills` and `ledger_funding` tables. */
export class SqliteLedger implements Ledger {
  constructor(private readonly connection: SqliteConnection) {}

  async record(
    agent: { id: string; accountId: string },
    fills: readonly LedgerFill[],
    funding: readonly LedgerFunding[],
    recordedAt: string,
  ): Promise<LedgerRecordOutcome> {
    const insertFill = this.connection.stmt(
      `INSERT INTO ledger_fills (agent_id, venue_fill_id, account_id, order_id, symbol, side, lots, price, fee,
         fee_currency, at, signal_id, effect, profit, quote, source_id, strategy, received_at, recorded_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, s.source_id, json_extract(s.normalized, '$.comment'),
         s.received_at, ?
       FROM (SELECT 1) AS one LEFT JOIN signals s ON s.id = ? AND s.account_id = ?
       WHERE true
       ON CONFLICT (agent_id, venue_fill_id) DO NOTHING`,
    );
    const insertFunding = this.connection.stmt(
      `INSERT INTO ledger_funding (agent_id, venue_funding_id, account_id, symbol, amount, currency, at, recorded_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (agent_id, venue_funding_id) DO NOTHING`,
    );
    return this.connection.db
      .transaction(() => {
        let recorded = 0;
        for (const f of fills) {
          recorded += insertFill.run(
            agent.id,
            f.venueFillId,
            agent.accountId,
            f.orderId,
            f.symbol,
            f.side,
            f.lots,
            f.price,
            f.fee,
            f.feeCurrency,
            isoTime(f.at),
            f.signalId,
            f.effect ?? null,
            f.profit ?? null,
            f.quote ?? null,
            recordedAt,
            f.signalId,
            agent.accountId,
          ).changes;
        }
        for (const p of funding) {
          recorded += insertFunding.run(
            agent.id,
            p.venueFundingId,
            agent.accountId,
            p.symbol,
            p.amount,
            p.currency,
            isoTime(p.at),
            recordedAt,
          ).changes;
        }
        return { recorded, known: fills.length + funding.length - recorded };
      })
      .immediate();
  }

  async fills(filter: LedgerFilter): Promise<RecordedFill[]> {
    const { where, values } = ledgerWhere(filter, () => '?');
    const rows = this.connection.db
      .prepare(`SELECT * FROM ledger_fills ${where} ORDER BY seq`)
      .all(...values) as LedgerFillRow[];
    return rows.map(recordedFillOf);
  }

  async funding(filter: LedgerFilter): Promise<RecordedFunding[]> {
    const { where, values } = ledgerWhere(filter, () => '?');
    const rows = this.connection.db
      .prepare(`SELECT * FROM ledger_funding ${where} ORDER BY seq`)
      .all(...values) as LedgerFundingRow[];
    return rows.map(recordedFundingOf);
  }
}
