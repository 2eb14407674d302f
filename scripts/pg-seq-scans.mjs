// Which statements a signalgate server sends read a table by sequential scan, and how many rows
// those scans read: each pg connection LOADs auto_explain for its own session (nothing set on the
// server or the database), plans come back as notices, and at exit the scans of $PG_SEQ_SCAN_TABLE
// (default deliveries) are written by statement, with the plan that read most, to $PG_STATEMENT_COUNT_DIR (default /tmp) as
// pg-seq-scans-<pid>.txt. For measuring beside a run (EXPLAIN ANALYZE of every statement: the
// run's latencies mean nothing with it):
//   BENCH_SERVER_NODE_ARGS="--import $PWD/scripts/pg-seq-scans.mjs" node dist/bench/main.js --burst
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import pg from 'pg';

const table = process.env.PG_SEQ_SCAN_TABLE ?? 'deliveries';
const scanLine = new RegExp(`Seq Scan on ${table}\\b[^\\n]*actual rows=(\\d+) loops=(\\d+)[^\\n]*(?:\\n\\s*Filter:[^\\n]*)?(?:\\n\\s*Rows Removed by Filter: (\\d+))?`, 'g');
const byStatement = new Map();
const watched = new WeakSet();

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  if (!watched.has(this)) {
    watched.add(this);
    this.on('notice', (notice) => {
      const text = String(notice.message);
      const scans = [...text.matchAll(scanLine)];
      if (scans.length === 0) return;
      // Rows a scan read: those it returned and those its filter removed, per loop.
      const rows = scans.reduce((sum, m) => sum + (Number(m[1]) + Number(m[3] ?? 0)) * Number(m[2]), 0);
      const statement = (text.match(/Query Text: ([^\n]*(?:\n[^\n]*){0,2})/)?.[1] ?? '?').replace(/\s+/g, ' ').slice(0, 100);
      const entry = byStatement.get(statement) ?? { plans: 0, rows: 0, largest: 0, plan: '' };
      entry.plans += 1;
      entry.rows += rows;
      if (rows >= entry.largest) Object.assign(entry, { largest: rows, plan: text });
      byStatement.set(statement, entry);
    });
    // Queued ahead of the connection's first statement, on the same connection.
    query.call(
      this,
      "LOAD 'auto_explain'; SET auto_explain.log_min_duration = 0; SET auto_explain.log_analyze = on; SET auto_explain.log_timing = off; SET auto_explain.log_nested_statements = on; SET auto_explain.log_level = notice",
      () => undefined,
    );
  }
  return query.call(this, config, ...rest);
};

process.on('exit', () => {
  const lines = [...byStatement]
    .sort((a, b) => b[1].rows - a[1].rows)
    .map(([statement, e]) => `${String(e.rows).padStart(10)} rows in ${String(e.plans).padStart(5)} plans (largest ${e.largest})  ${statement}`);
  const file = path.join(process.env.PG_STATEMENT_COUNT_DIR ?? '/tmp', `pg-seq-scans-${process.pid}.txt`);
  const plans = [...byStatement].filter(([, e]) => e.largest > 0).map(([statement, e]) => `--- the plan that read most (${e.largest} rows) of: ${statement}\n${e.plan}`);
  fs.writeFileSync(file, `rows of ${table} read by sequential scans, by statement\n${lines.join('\n')}\n\n${plans.join('\n\n')}\n`);
});
