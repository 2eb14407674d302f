import type pg from 'pg';
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
import { inTransaction } from './transaction.js';

/** The ledger's fills and funding payments: the `ledger_fills` and `ledger_funding` tables. */
export class PostgresLedger implements Ledger {
  constructor(private readonly pool: pg.Pool) {}

  async record(
    agent: { id: string; accountId: string },
    fills: readonly LedgerFill[],
    funding: readonly LedgerFunding[],
    recordedAt: string,
  ): Promise<LedgerRecordOutcome> {
    return inTransaction(this.pool, async (client) => {
      let recorded = 0;
      for (const f of fills) {
        const result = await client.query(
          `INSERT INTO ledger_fills (agent_id, venue_fill_id, account_id, order_id, symbol, side, lots, price, fee,
             fee_currency, at, signal_id, effect, profit, quote, source_id, strategy, received_at, recorded_at)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, s.source_id,
             s.normalized->>'comment', s.received_at, $16
           FROM (SELECT 1) AS one LEFT JOIN signals s ON s.id = $12 AND s.account_id = $3
           ON CONFLICT (agent_id, venue_fill_id) DO NOTHING`,
          [
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
          ],
        );
        recorded += result.rowCount ?? 0;
      }
      for (const p of funding) {
        const result = await client.query(
          `INSERT INTO ledger_funding (agent_id, venue_funding_id, account_id, symbol, amount, currency, at, recorded_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (agent_id, venue_funding_id) DO NOTHING`,
          [agent.id, p.venueFundingId, agent.accountId, p.symbol, p.amount, p.currency, isoTime(p.at), recordedAt],
        );
        recorded += result.rowCount ?? 0;
      }
      return { recorded, known: fills.length + funding.length - recorded };
    });
  }

  async fills(filter: LedgerFilter): Promise<RecordedFill[]> {
    const { where, values } = ledgerWhere(filter, (n) => `$${n}`);
    const { rows } = await this.pool.query<LedgerFillRow>(`SELECT * FROM ledger_fills ${where} ORDER BY seq`, values);
    return rows.map(recordedFillOf);
  }

  async funding(filter: LedgerFilter): Promise<RecordedFunding[]> {
    const { where, values } = ledgerWhere(filter, (n) => `$${n}`);
    const { rows } = await this.pool.query<LedgerFundingRow>(
      `SELECT * FROM ledger_funding ${where} ORDER BY seq`,
      values,
    );
    return rows.map(recordedFundingOf);
  }
}
