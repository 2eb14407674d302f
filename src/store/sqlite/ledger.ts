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
import type { SqliteConnection } from './connection.js';

/** The ledger's fills, funding payments and busts: the `ledger_fills`, `ledger_funding` and `ledger_busts` tables. */
export class SqliteLedger implements Ledger {
  constructor(private readonly connection: SqliteConnection) {}

  async record(
    agent: LedgerAgent,
    fills: readonly LedgerFill[],
    funding: readonly LedgerFunding[],
    recordedAt: string,
    busts: readonly LedgerBust[] = [],
  ): Promise<LedgerRecordOutcome> {
    const insertFill = this.connection.stmt(
      `INSERT INTO ledger_fills (${FILL_COLUMNS}, source_id, strategy, received_at, recorded_at)
       SELECT ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, s.source_id, json_extract(s.normalized, '$.comment'),
         s.received_at, ?
       FROM (SELECT 1) AS one LEFT JOIN signals s ON s.id = ? AND s.account_id = ?
       WHERE true
       ON CONFLICT (agent_id, venue_fill_id) DO NOTHING`,
    );
    const insertFunding = this.connection.stmt(
      `INSERT INTO ledger_funding (${FUNDING_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (agent_id, venue_funding_id) DO NOTHING`,
    );
    const insertBust = this.connection.stmt(
      `INSERT INTO ledger_busts (${BUST_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT (agent_id, venue_fill_id) DO UPDATE SET lots = excluded.lots, at = excluded.at
       WHERE excluded.lots > ledger_busts.lots`,
    );
    return this.connection.db
      .transaction(() => {
        let recorded = 0;
        for (const f of fills)
          recorded += insertFill.run(...fillValues(agent, f), recordedAt, f.signalId, agent.accountId).changes;
        for (const p of funding) recorded += insertFunding.run(...fundingValues(agent, p, recordedAt)).changes;
        for (const b of busts) recorded += insertBust.run(...bustValues(agent, b, recordedAt)).changes;
        return { recorded, known: fills.length + funding.length + busts.length - recorded };
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

  async busts(filter: LedgerFilter): Promise<RecordedBust[]> {
    const { where, values } = ledgerWhere(filter, () => '?');
    const rows = this.connection.db
      .prepare(`SELECT * FROM ledger_busts ${where} ORDER BY seq`)
      .all(...values) as LedgerBustRow[];
    return rows.map(recordedBustOf);
  }
}
