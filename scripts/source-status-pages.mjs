// The page of a source's log filtered by status, with a checkout's schema and query, on a log of
// 1 M signals over 50 sources: src-1 with 5 % of its entries rejected, src-7 with all of them
// rejected (a sender misconfigured for weeks). Prints, per source and status, the first and a
// deep page's rows, the best of 30 runs of the query alone and the index it walks.
//
//   node scripts/source-status-pages.mjs [checkout, default .]
//
// The checkout's migrations make the file and its dist/ gives the query (`signalListQuery`).
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const checkout = path.resolve(process.argv[2] ?? '.');
const Database = createRequire(import.meta.url)('better-sqlite3');
const { signalListQuery } = await import(pathToFileURL(path.join(checkout, 'dist', 'store', 'sqlite', 'signals.js')).href);
const print = (text) => process.stdout.write(`${text}\n`);

const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-source-pages-'));
try {
  const db = new Database(path.join(dir, 'log.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = OFF');
  const migrations = path.join(checkout, 'migrations', 'sqlite');
  for (const file of readdirSync(migrations).filter((name) => name.endsWith('.sql')).sort()) db.exec(readFileSync(path.join(migrations, file), 'utf8'));
  db.exec("INSERT INTO accounts (id, name, monthly_signal_quota, created_at) VALUES ('acc', 'a', 1000000000, '2030-01-01T00:00:00.000Z')");
  const columns = db.prepare("SELECT name, type FROM pragma_table_info('sources') WHERE \"notnull\" AND dflt_value IS NULL").all();
  const source = db.prepare(`INSERT INTO sources (${columns.map((c) => c.name).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`);
  const value = ({ name, type }, n) =>
    type === 'INTEGER' ? 1 : name === 'id' ? `src-${n}` : name === 'account_id' ? 'acc' : name === 'agent_ids' ? '[]' : name.endsWith('_at') ? '2030-01-01T00:00:00.000Z' : `${name}-${n}`;
  for (let n = 0; n < 50; n++) source.run(...columns.map((column) => value(column, n)));
  const rejected = "(i % 50 = 7 OR i % 1000 = 1)";
  db.exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 1000000)
    INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, raw_body, normalized)
    SELECT printf('sig-%07d', i), 'src-' || (i % 50), 'acc', strftime('%Y-%m-%dT%H:%M:%fZ', '2030-01-01', '+' || i || ' seconds'),
           CASE WHEN ${rejected} THEN 'rejected' ELSE 'queued' END, CASE WHEN ${rejected} THEN 422 ELSE 202 END, 'x',
           CASE WHEN ${rejected} THEN NULL ELSE json_object('symbol', 'SYM' || (i % 20)) END
      FROM n`);
  db.exec('ANALYZE');
  for (const sourceId of ['src-1', 'src-7']) {
    for (const status of ['accepted', 'rejected']) {
      for (const before of [undefined, 'sig-0500001']) {
        const { sql, params } = signalListQuery({ sourceId, status, limit: 50, before });
        const statement = db.prepare(sql);
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params).map((row) => row.detail).find((detail) => detail.startsWith('SEARCH s') || detail.startsWith('SCAN s'));
        let best = Infinity;
        let rows = 0;
        for (let run = 0; run < 30; run++) {
          const started = process.hrtime.bigint();
          rows = statement.all(...params).length;
          best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
        }
        print(`${sourceId} ${status} ${before === undefined ? 'first' : 'deep'} page: ${rows} rows, ${best.toFixed(3)} ms, ${plan}`);
      }
    }
  }
  db.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
