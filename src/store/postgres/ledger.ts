import type pg from 'pg';
import type {
  Ledger,
  LedgerAgent,
  LedgerBust,
  LedgerFill,
  LedgerFilter,
  LedgerFunding,
  LedgerRecordOutcome,
  RecordedBust,
  RecordedFill,
  RecordedFunding,
} from '../ledger.js';
import {
  BUST_COLUMNS,
  bustValues,
  FILL_COLUMNS,
  fillValues,
  FUNDING_COLUMNS,
  fundingValues,
  ledgerWhere,
  recordedBustOf,
  recordedFillOf,
  recordedFundingOf,
  type LedgerBustRow,
  type LedgerFillRow,
  type LedgerFundingRow,
} from '../ledger-rows.js';
import { GroupedFills } from './grouped-fills.js';
import { inTransaction } from './transaction.js';

/** The ledger's fills, funding payments and busts: the `ledger_fills`, `ledger_funding` and `ledger_busts` tables. */
export class PostgresLedger implements Ledger {
  /** Reports of fills alone (an executed signal's): many agents' written in one statement. */
  private readonly grouped: GroupedFills;

  constructor(private readonly pool: pg.Pool) {
    this.grouped = new GroupedFills(pool, async (agent, fills, recordedAt) => {
      const { recorded } = await this.recordAlone(agent, fills, [], recordedAt, []);
      return recorded;
    });
  }

  async record(
    agent: LedgerAgent,
    fills: readonly LedgerFill[],
    funding: readonly LedgerFunding[],
    recordedAt: string,
    busts: readonly LedgerBust[] = [],
  ): Promise<LedgerRecordOutcome> {
    if (fills.length > 0 && funding.length === 0 && busts.length === 0) {
      const recorded = await this.grouped.record(agent, fills, recordedAt);
      return { recorded, known: fills.length - recorded };
    }
    return this.recordAlone(agent, fills, funding, recordedAt, busts);
  }

  /** One report in a transaction of its own. */
  private recordAlone(
    agent: LedgerAgent,
    fills: readonly LedgerFill[],
    funding: readonly LedgerFunding[],
    recordedAt: string,
    busts: readonly LedgerBust[],
  ): Promise<LedgerRecordOutcome> {
    return inTransaction(this.pool, async (client) => {
      let recorded = 0;
      for (const f of fills) {
        // $3 is the account, $12 the signal: the signal is the account's own, or none.
        const result = await client.query(
          `INSERT INTO ledger_fills (${FILL_COLUMNS}, source_id, strategy, received_at, recorded_at)
           SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, s.source_id,
             s.normalized->>'comment', s.received_at, $16
           FROM (SELECT 1) AS one LEFT JOIN signals s ON s.id = $12 AND s.account_id = $3
           ON CONFLICT (agent_id, venue_fill_id) DO NOTHING`,
          [...fillValues(agent, f), recordedAt],
        );
        recorded += result.rowCount ?? 0;
      }
      for (const p of funding) {
        const result = await client.query(
          `INSERT INTO ledger_funding (${FUNDING_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
           ON CONFLICT (agent_id, venue_funding_id) DO NOTHING`,
          fundingValues(agent, p, recordedAt),
        );
        recorded += result.rowCount ?? 0;
      }
      for (const b of busts) {
        const result = await client.query(
          `INSERT INTO ledger_busts (${BUST_COLUMNS}) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (agent_id, venue_fill_id) DO UPDATE SET lots = excluded.lots, at = excluded.at
           WHERE excluded.lots > ledger_busts.lots`,
          bustValues(agent, b, recordedAt),
        );
        recorded += result.rowCount ?? 0;
      }
      return { recorded, known: fills.length + funding.length + busts.length - recorded };
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

  async busts(filter: LedgerFilter): Promise<RecordedBust[]> {
    const { where, values } = ledgerWhere(filter, (n) => `$${n}`);
    const { rows } = await this.pool.query<LedgerBustRow>(`SELECT * FROM ledger_busts ${where} ORDER BY seq`, values);
    return rows.map(recordedBustOf);
  }
}
