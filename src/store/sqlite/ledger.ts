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
import type { DurableReads } from './durable-reads.js';
import type { SqliteWriteGroup } from './write-group.js';

/** The ledger's fills, funding payments and busts: the `ledger_fills`, `ledger_funding` and `ledger_busts` tables. */
export class SqliteLedger implements Ledger {
  constructor(
    private readonly connection: SqliteConnection,
    /**
     * A report is group-committed with the other agent writes of its turn and synced on the
     * thread pool: run alone on the event loop, its BEGIN IMMEDIATE waited there for the inbound
     * thread's write lock and its COMMIT for the disk, which a sustained rate of paper signals
     * (a report every 200 ms) made a large share of the server's event-loop time (decision
     * 0056-sustained-paper-rate).
     */
    private readonly writes: SqliteWriteGroup,
    /** A report's COMMIT is visible before its sync: reads answer only once what they found is on disk. */
    private readonly reads: DurableReads,
  ) {}

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
    return this.writes.run((): LedgerRecordOutcome => {
      let recorded = 0;
      for (const f of fills)
        recorded += insertFill.run(...fillValues(agent, f), recordedAt, f.signalId, agent.accountId).changes;
      for (const p of funding) recorded += insertFunding.run(...fundingValues(agent, p, recordedAt)).changes;
      for (const b of busts) recorded += insertBust.run(...bustValues(agent, b, recordedAt)).changes;
      return { recorded, known: fills.length + funding.length + busts.length - recorded };
    });
  }

  async fills(filter: LedgerFilter): Promise<RecordedFill[]> {
    const { where, values } = ledgerWhere(filter, () => '?');
    const rows = (await this.reads.read(() =>
      this.connection.db.prepare(`SELECT * FROM ledger_fills ${where} ORDER BY seq`).all(...values),
    )) as LedgerFillRow[];
    return rows.map(recordedFillOf);
  }

  async funding(filter: LedgerFilter): Promise<RecordedFunding[]> {
    const { where, values } = ledgerWhere(filter, () => '?');
    const rows = (await this.reads.read(() =>
      this.connection.db.prepare(`SELECT * FROM ledger_funding ${where} ORDER BY seq`).all(...values),
    )) as LedgerFundingRow[];
    return rows.map(recordedFundingOf);
  }

  async busts(filter: LedgerFilter): Promise<RecordedBust[]> {
    const { where, values } = ledgerWhere(filter, () => '?');
    const rows = (await this.reads.read(() =>
      this.connection.db.prepare(`SELECT * FROM ledger_busts ${where} ORDER BY seq`).all(...values),
    )) as LedgerBustRow[];
    return rows.map(recordedBustOf);
  }
}
