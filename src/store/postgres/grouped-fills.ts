import type pg from 'pg';
import type { LedgerAgent, LedgerFill } from '../ledger.js';
import { FILL_COLUMNS, fillValues } from '../ledger-rows.js';
import { againIfRolledBack } from './transaction.js';

interface PendingReport {
  agent: LedgerAgent;
  fills: readonly LedgerFill[];
  recordedAt: string;
  resolve: (recorded: number) => void;
  reject: (error: unknown) => void;
}

/** The columns each fill row brings, in the order of `fillValues` then `recorded_at`. */
const COLUMNS = [...FILL_COLUMNS.split(', '), 'recorded_at'];
const NUMBERS = new Set(['lots', 'price', 'fee', 'profit', 'quote']);
/** The array type a column travels in: unnest takes one typed array per column. */
function arrayType(column: string): string {
  if (column === 'at' || column === 'recorded_at') return 'timestamptz[]';
  return NUMBERS.has(column) ? 'float8[]' : 'text[]';
}

/**
 * One statement for the fills of every report in the group, in the reports' order (`n`), so
 * each agent's fills keep the order it reported them in (`seq`). The signal is the account's own
 * or none, as a report alone records it.
 */
const GROUPED_FILLS_SQL = `INSERT INTO ledger_fills (${COLUMNS.join(', ')}, source_id, strategy, received_at)
     SELECT ${COLUMNS.map((column) => `f.${column}`).join(', ')}, s.source_id, s.normalized->>'comment', s.received_at
       FROM unnest(${COLUMNS.map((column, i) => `$${i + 1}::${arrayType(column)}`).join(', ')})
              WITH ORDINALITY AS f (${COLUMNS.join(', ')}, n)
       LEFT JOIN signals s ON s.id = f.signal_id AND s.account_id = f.account_id
      ORDER BY f.n
     ON CONFLICT (agent_id, venue_fill_id) DO NOTHING
     RETURNING agent_id, venue_fill_id`;

/**
 * The fills that reports bring while a group is being written, written by the next group in one
 * statement, so one COMMIT (one WAL flush) serves many agents' reports instead of one each: in a
 * burst every executed signal brings one. One group is written at a time, so two groups never
 * wait on each other's fills. A group that fails for any other reason than a rollback PostgreSQL
 * asks to repeat is not failed whole: each of its reports is then recorded alone (`alone`), so one
 * bad report fails only itself. Recording is idempotent (a fill already recorded is left as it
 * was), so a group whose COMMIT's fate is unknown is safely written again that way.
 */
export class GroupedFills {
  private queue: PendingReport[] = [];
  private writing = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly alone: (agent: LedgerAgent, fills: readonly LedgerFill[], recordedAt: string) => Promise<number>,
  ) {}

  /** Resolves with how many of the fills were new (the rest were recorded before). */
  record(agent: LedgerAgent, fills: readonly LedgerFill[], recordedAt: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.queue.push({ agent, fills, recordedAt, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        // The rest of this turn's reports join the group.
        setImmediate(() => void this.write());
      }
    });
  }

  private async write(): Promise<void> {
    while (this.queue.length > 0) {
      const group = this.queue;
      this.queue = [];
      try {
        const rows = group.flatMap((p) => p.fills.map((f) => [...fillValues(p.agent, f), p.recordedAt]));
        const values = COLUMNS.map((_, column) => rows.map((row) => row[column]));
        const { rows: inserted } = await againIfRolledBack(() =>
          this.pool.query<{ agent_id: string; venue_fill_id: string }>({ text: GROUPED_FILLS_SQL, values }),
        );
        const fresh = new Set(inserted.map((row) => `${row.agent_id}\n${row.venue_fill_id}`));
        // A fill in two reports of the group (or twice in one) is new for the first only.
        for (const pending of group) {
          let recorded = 0;
          for (const f of pending.fills) if (fresh.delete(`${pending.agent.id}\n${f.venueFillId}`)) recorded++;
          pending.resolve(recorded);
        }
      } catch {
        // One after another, so each agent's fills keep their order here too.
        for (const p of group) await this.alone(p.agent, p.fills, p.recordedAt).then(p.resolve, p.reject);
      }
    }
    this.writing = false;
  }
}
