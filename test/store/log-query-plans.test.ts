import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../../src/store/open-store.js';
import {
  SIGNALS_PER_DAY_SQL as POSTGRES_PER_DAY,
  signalListQuery as postgresQuery,
} from '../../src/store/postgres/signals.js';
import {
  SIGNALS_PER_DAY_SQL as SQLITE_PER_DAY,
  signalListQuery as sqliteQuery,
} from '../../src/store/sqlite/signals.js';
import { SQLITE_FILE_NAME } from '../../src/store/sqlite/sqlite-store.js';
import type { SignalFilter } from '../../src/store/store.js';
import { freshPostgresSchema, type TestSchema } from '../support/postgres.js';

/**
 * Every filter of the signal log, alone and with a cursor, and a source's log filtered by
 * status, symbol or outcome, is served by an index in log order: a page reads about as many
 * rows as it shows, never the whole table nor another source's rows (read from the plans).
 */
const FILTERS: Partial<SignalFilter>[] = [
  {},
  { sourceId: 'src-1' },
  { status: 'accepted' },
  { status: 'rejected' },
  { status: 'duplicate' },
  { symbol: 'SYM7' },
  { outcome: 'executed' },
  { outcome: 'failed' },
  { outcome: 'expired', sourceId: 'src-1' },
  { outcome: 'rejected', symbol: 'SYM3' },
  { sourceId: 'src-1', status: 'rejected' },
  { sourceId: 'src-1', status: 'accepted' },
  { sourceId: 'src-1', status: 'duplicate' },
  { sourceId: 'src-1', symbol: 'SYM7' },
  { sourceId: 'src-1', status: 'accepted', symbol: 'SYM7' },
  { sourceId: 'src-1', outcome: 'failed' },
  { sourceId: 'src-1', status: 'accepted', outcome: 'executed' },
  { symbol: 'SYM17', outcome: 'failed' },
];
/** Filters few signals match: walking the whole log's index for them would read most of it. */
function rare(filter: Partial<SignalFilter>): boolean {
  return (
    filterCount(filter) === 1 &&
    (filter.status === 'rejected' || filter.status === 'duplicate' || filter.outcome === 'failed')
  );
}

/** The indexes that may serve each filter alone (docs/stores.md). */
function servingIndexes(filter: Partial<SignalFilter>): string[] | null {
  const index = servingIndex(filter);
  if (index === null) return null;
  if (filter.sourceId !== undefined && filterCount(filter) > 1) return [index];
  // A symbol's signals with an outcome: the symbol's index, each checked for the outcome.
  if (filter.outcome !== undefined && filter.symbol !== undefined) return [index];
  return rare(filter) ? [index] : [index, 'signals_log'];
}

/**
 * On PostgreSQL each delivery carries its signal's source and symbol (migration 016): an outcome
 * with either is read from the deliveries' index of that source or symbol and status.
 */
function postgresServingIndexes(filter: Partial<SignalFilter>): string[] | null {
  if (filter.outcome !== undefined && filter.sourceId !== undefined) return ['deliveries_source_outcome_log'];
  if (filter.outcome !== undefined && filter.symbol !== undefined) return ['deliveries_symbol_outcome_log'];
  return servingIndexes(filter);
}

/** The index made for each filter alone, and for a source's log filtered (docs/stores.md). */
function servingIndex(filter: Partial<SignalFilter>): string | null {
  if (filter.sourceId !== undefined && filterCount(filter) > 1) {
    if (filter.outcome !== undefined) return 'signals_source_log';
    if (filter.symbol !== undefined) return 'signals_source_symbol_log';
    if (filter.status === 'duplicate') return 'signals_source_duplicate_log';
    if (filter.status === 'rejected') return 'signals_source_rejected_log';
    // A source's accepted signals are read from its whole log: nearly all are accepted.
    return 'signals_source_log';
  }
  if (filter.outcome !== undefined && filter.symbol !== undefined && filterCount(filter) === 2)
    return 'signals_symbol_log';
  if (filterCount(filter) > 1) return null;
  if (filter.outcome !== undefined) return 'deliveries_outcome_log';
  if (filter.status === 'duplicate') return 'signals_duplicate_log';
  // Nearly every signal is accepted: the log's own index, checking each row, reads about a page.
  if (filter.status === 'accepted') return 'signals_log';
  if (filter.status === 'rejected') return 'signals_rejected_log';
  if (filter.symbol !== undefined) return 'signals_symbol_log';
  if (filter.sourceId !== undefined) return 'signals_source_log';
  return 'signals_log';
}
const CASES = FILTERS.flatMap((filter) => [
  { limit: 50, ...filter },
  { limit: 50, before: 'sig-0100000', ...filter },
]);

describe('signal log query plans', () => {
  describe('sqlite', () => {
    let dataDir: string;
    let db: Database.Database;
    beforeAll(async () => {
      dataDir = mkdtempSync(join(tmpdir(), 'signalgate-plans-'));
      const store = await openStore({ dataDir });
      await store.close();
      db = new Database(join(dataDir, SQLITE_FILE_NAME));
    });
    afterAll(() => {
      db?.close();
      rmSync(dataDir, { recursive: true, force: true });
    });

    it.each(CASES)('reads %o through an index in log order', (filter) => {
      const { sql, params } = sqliteQuery(filter);
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as { detail: string }[]).map(
        (row) => row.detail,
      );
      // A bare SCAN reads every row; a temp b-tree for ORDER BY sorts every match before the first is answered.
      expect(
        plan.filter((line) => /^SCAN (s|d|signals|deliveries)\b(?! USING)/.test(line)),
        plan.join('\n'),
      ).toEqual([]);
      expect(
        plan.filter((line) => line.includes('TEMP B-TREE FOR ORDER BY')),
        plan.join('\n'),
      ).toEqual([]);
      // The table the page walks is walked through an index.
      expect(
        plan.some((line) => /^(SCAN|SEARCH) (s|d) USING (COVERING )?INDEX/.test(line)),
        plan.join('\n'),
      ).toBe(true);
      const indexes = servingIndexes(filter);
      if (indexes !== null) {
        expect(
          plan.some((line) =>
            indexes.some((name) => line.includes(`INDEX ${name} `) || line.endsWith(`INDEX ${name}`)),
          ),
          plan.join('\n'),
        ).toBe(true);
      }
      if (filter.outcome !== undefined && (filter.sourceId !== undefined || filter.symbol !== undefined)) {
        // Each of the source's (or symbol's) signals is checked by its own deliveries, not every delivery in that status.
        expect(
          plan.filter((line) => line.includes('deliveries_outcome_log')),
          plan.join('\n'),
        ).toEqual([]);
        expect(
          plan.some((line) => /^SEARCH d EXISTS USING PRIMARY KEY/.test(line)),
          plan.join('\n'),
        ).toBe(true);
      }
    });

    it('reads signals per day of an account from its per-day counter by key, never the log', () => {
      const plan = (
        db
          .prepare(`EXPLAIN QUERY PLAN ${SQLITE_PER_DAY}`)
          .all({ account: 'acc', from: '2030-01-01', to: '2030-01-30' }) as { detail: string }[]
      ).map((row) => row.detail);
      expect(plan, plan.join('\n')).toEqual([
        expect.stringMatching(/^SEARCH signals_per_day USING PRIMARY KEY \(account_id=\? AND day>\? AND day<\?\)$/),
      ]);
    });
  });

  describe('postgres', () => {
    let schema: TestSchema;
    let pool: pg.Pool;
    beforeAll(async () => {
      schema = await freshPostgresSchema('plans');
      const store = await openStore({
        dataDir: '/nonexistent',
        databaseUrl: schema.connectionString,
        schema: schema.schema,
      });
      await store.close();
      pool = new pg.Pool({ connectionString: schema.urlWithSchema, max: 1 });
      // A log of 200,000 signals on 199 sources of two accounts (one source of one, the rest of the other): most accepted and executed, a few of each other kind.
      await pool.query(`
        INSERT INTO accounts VALUES ('acc', 'a', 1000000, now());
        INSERT INTO accounts VALUES ('acc-2', 'b', 1000000, now());
        INSERT INTO sources (id, account_id, name, auth_key_hint, auth_key_hash, active, max_signal_age_seconds, created_at)
          SELECT 'src-' || n, CASE WHEN n = 0 THEN 'acc' ELSE 'acc-2' END, 's' || n, 'k' || n, 'h' || n, true, 120, now()
            FROM generate_series(0, 198) AS n;
        INSERT INTO agents (id, account_id, name, token_hash, created_at) VALUES ('agt', 'acc', 'a', 't', now());
        INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, raw_body, normalized, symbol, duplicate_of)
          SELECT 'sig-' || lpad(i::text, 7, '0'), 'src-' || ((i / 7) % 199), CASE WHEN (i / 7) % 199 = 0 THEN 'acc' ELSE 'acc-2' END,
                 '2030-01-01'::timestamptz + i * interval '1 second',
                 CASE WHEN i % 50 = 0 THEN 'rejected' ELSE 'queued' END, 202, 'x'::bytea,
                 json_build_object('symbol', 'SYM' || (i % 20)), 'SYM' || (i % 20),
                 CASE WHEN i % 997 = 0 THEN 'sig-0000001' END
            FROM generate_series(1, 200000) AS i;
        INSERT INTO deliveries (signal_id, agent_id, seq, status, expires_at, received_at, source_id, symbol)
          SELECT id, 'agt', row_number() OVER (ORDER BY id),
                 CASE WHEN right(id, 3) = '777' THEN 'failed' WHEN right(id, 2) = '13' THEN 'expired'
                      WHEN right(id, 2) = '42' THEN 'rejected' ELSE 'executed' END,
                 received_at + interval '2 minutes', received_at, source_id, symbol
            FROM signals WHERE status = 'queued' AND duplicate_of IS NULL;
        -- The per-day counter of an installation of 300 accounts over a year.
        INSERT INTO accounts SELECT 'acc-n' || a, 'n', 1000, now() FROM generate_series(1, 300) AS a;
        INSERT INTO signals_per_day (account_id, day, accepted, rejected)
          SELECT 'acc-n' || a, '2030-01-01'::date + d, 100, 1 FROM generate_series(1, 300) AS a, generate_series(0, 364) AS d;`);
      // As autovacuum would: statistics, and the visibility map that lets a count read the index alone.
      await pool.query('VACUUM ANALYZE');
    }, 120_000);
    afterAll(async () => {
      await pool?.end();
      await schema?.drop();
    });

    it.each(CASES)('reads %o through an index in log order', async (filter) => {
      const { sql, params } = postgresQuery(filter);
      const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(`EXPLAIN (FORMAT JSON) ${sql}`, params);
      const nodes = flatten(rows[0]!['QUERY PLAN'][0].Plan);
      const text = JSON.stringify(nodes.map((node) => [node['Node Type'], node['Relation Name'], node['Index Name']]));
      expect(
        nodes.filter((node) => node['Node Type'] === 'Seq Scan'),
        text,
      ).toEqual([]);
      // A filter alone is read through its index, or (when most signals match it) by walking
      // the log's index in order; the planner may sort the few matches of a rare outcome.
      const indexes = postgresServingIndexes(filter);
      if (indexes !== null)
        expect(
          nodes.some((node) => indexes.includes(node['Index Name'] ?? '')),
          text,
        ).toBe(true);
      // An outcome with a source or a symbol walks the deliveries of that source or symbol in
      // that status alone: never the source's or the symbol's signals met with every delivery
      // in the status, whose cost depends on which is sparser where the page is.
      if (filter.outcome !== undefined && (filter.sourceId !== undefined || filter.symbol !== undefined)) {
        const merged = [
          'deliveries_outcome_log',
          'signals_source_log',
          'signals_symbol_log',
          'signals_source_symbol_log',
          'signals_source_rejected_log',
        ];
        expect(
          nodes.filter((node) => merged.includes(node['Index Name'] ?? '')),
          text,
        ).toEqual([]);
      }
    });

    it('reads signals per day of an account from its per-day counter by key, never the log', async () => {
      const { rows } = await pool.query<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
        `EXPLAIN (FORMAT JSON) ${POSTGRES_PER_DAY}`,
        ['acc', '2030-01-01', '2030-01-30'],
      );
      const nodes = flatten(rows[0]!['QUERY PLAN'][0].Plan);
      const text = JSON.stringify(nodes.map((node) => [node['Node Type'], node['Relation Name'], node['Index Name']]));
      // Through its key (an index scan, or a bitmap of the key's range): no other table, no scan of the whole.
      expect(
        [...new Set(nodes.map((node) => node['Relation Name']).filter((name) => name !== undefined))],
        text,
      ).toEqual(['signals_per_day']);
      expect(
        nodes.filter((node) => node['Index Name'] === 'signals_per_day_pkey'),
        text,
      ).toHaveLength(1);
      expect(
        nodes.filter((node) => node['Node Type'] === 'Seq Scan'),
        text,
      ).toEqual([]);
    });
  });
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  Plans?: PlanNode[];
}

function filterCount(filter: Partial<SignalFilter>): number {
  return (['sourceId', 'status', 'symbol', 'outcome'] as const).filter((name) => filter[name] !== undefined).length;
}

function flatten(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(flatten)];
}
