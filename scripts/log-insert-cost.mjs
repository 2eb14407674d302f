// What an insert into the signal log costs with a checkout's schema: CPU per insert and WAL bytes
// per insert, the bench mix's six accepted signals (two sources, five symbols) inserted in batches
// of 25 per transaction as the group commit does, on a fresh SQLite file made by that checkout's
// migration files (WAL, synchronous OFF: the disk's sync is not in it; foreign keys on). With
// indexes named after the checkout, those are dropped first (what an index costs).
//
//   node scripts/log-insert-cost.mjs [checkout, default .] [index,index,...]
//
// Prints µs of CPU per insert (process.cpuUsage over ROWS inserts after 5,000 of warm-up, ROWS
// from LOG_INSERT_ROWS, default 40,000) and, on a second file with automatic checkpoints off, the
// WAL's bytes per insert and its frames (a page written at a COMMIT: two writes each) per batch,
// by the table or index the page belongs to. Run it pinned (taskset -c 0) and alternate checkouts.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import process from 'node:process';

const checkout = path.resolve(process.argv[2] ?? '.');
const drop = (process.argv[3] ?? '').split(',').filter((name) => name !== '');
const ROWS = Number(process.env.LOG_INSERT_ROWS ?? 40000);
const WARM_UP = 5000;
const BATCH = 25;
const Database = createRequire(import.meta.url)('better-sqlite3');
const print = (text) => process.stdout.write(`${text}\n`);

/** [source, content type, raw body, normalized] of the bench mix's six signals, as the log stores them. */
const MIX = [
  [0, "text/plain", "EURUSD,buy,vol_pctbal_loss=1,sl_pips=20,tp1_pips=20,tp2_pips=40", "{\"symbol\":\"EURUSD\",\"action\":\"buy\",\"volume\":{\"type\":\"pctbal_loss\",\"value\":1},\"sl\":{\"type\":\"pips\",\"value\":20},\"tp\":[{\"type\":\"pips\",\"value\":20,\"pct\":50},{\"type\":\"pips\",\"value\":40,\"pct\":50}]}"],
  [0, "application/json", "{\"symbol\":\"GBPUSD\",\"action\":\"sell\",\"vol\":0.2,\"sl_pips\":25,\"tp_pips\":50,\"comment\":\"london-breakout\"}", "{\"symbol\":\"GBPUSD\",\"action\":\"sell\",\"comment\":\"london-breakout\",\"volume\":{\"type\":\"lots\",\"value\":0.2},\"sl\":{\"type\":\"pips\",\"value\":25},\"tp\":[{\"type\":\"pips\",\"value\":50,\"pct\":100}]}"],
  [1, "text/plain", "XAUUSD,buylimit,vol=0.1,entry_pips=50,sl_pips=100,tp_pips=300,comment=\"gold, dip\"", "{\"symbol\":\"XAUUSD\",\"action\":\"buylimit\",\"comment\":\"gold, dip\",\"volume\":{\"type\":\"lots\",\"value\":0.1},\"sl\":{\"type\":\"pips\",\"value\":100},\"tp\":[{\"type\":\"pips\",\"value\":300,\"pct\":100}],\"entry\":{\"type\":\"pips\",\"value\":50}}"],
  [0, "text/plain", "USDJPY,closebuy,pct=50", "{\"symbol\":\"USDJPY\",\"action\":\"closebuy\",\"close\":{\"pct\":50}}"],
  [0, "application/json", "{\"symbol\":\"eurusd\",\"action\":\"BUY\",\"volume\":0.1,\"volumeType\":\"lots\",\"sl\":20,\"slType\":\"pips\",\"tp\":40,\"tpType\":\"pips\"}", "{\"symbol\":\"EURUSD\",\"action\":\"buy\",\"volume\":{\"type\":\"lots\",\"value\":0.1},\"sl\":{\"type\":\"pips\",\"value\":20},\"tp\":[{\"type\":\"pips\",\"value\":40,\"pct\":100}]}"],
  [1, "application/json", "{\"symbol\":\"BTCUSD\",\"action\":\"long\",\"vol_pcteq\":2,\"trail_trigger\":100,\"trail_distance\":50,\"be_trigger\":80}", "{\"symbol\":\"BTCUSD\",\"action\":\"buy\",\"volume\":{\"type\":\"pcteq\",\"value\":2},\"trail\":{\"trigger\":100,\"distance\":50,\"step\":0},\"breakeven\":{\"trigger\":80,\"offset\":0}}"],
];

function run(checkpoints) {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-log-insert-'));
  try {
    const db = new Database(path.join(dir, 'log.db'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = OFF');
    db.pragma('foreign_keys = ON');
    if (!checkpoints) db.pragma('wal_autocheckpoint = 0');
    const migrations = path.join(checkout, 'migrations', 'sqlite');
    for (const file of readdirSync(migrations).filter((name) => name.endsWith('.sql')).sort()) db.exec(readFileSync(path.join(migrations, file), 'utf8'));
    for (const name of drop) db.exec(`DROP INDEX ${name}`);
    db.prepare("INSERT INTO accounts (id, name, monthly_signal_quota, created_at) VALUES ('acc', 'a', 1000000000, '2030-01-01T00:00:00.000Z')").run();
    // Every NOT NULL column without a default, whichever the checkout's sources table has.
    const columns = db.prepare("SELECT name, type FROM pragma_table_info('sources') WHERE \"notnull\" AND dflt_value IS NULL").all();
    const required = columns.map((column) => column.name);
    const source = db.prepare(`INSERT INTO sources (${required.join(', ')}) VALUES (${required.map(() => '?').join(', ')})`);
    const value = ({ name, type }, n) =>
      type === 'INTEGER' ? 1 : name === 'id' ? `src-${n}` : name === 'account_id' ? 'acc' : name === 'agent_ids' ? '[]' : name.endsWith('_at') ? '2030-01-01T00:00:00.000Z' : `${name}-${n}`;
    for (const n of [0, 1]) source.run(...columns.map((column) => value(column, n)));
    const insert = db.prepare(
      `INSERT INTO signals (id, source_id, account_id, received_at, status, http_status, content_type, raw_body, normalized, quota_period, quota_used, quota_limit)
       VALUES (?, ?, 'acc', ?, 'queued', 202, ?, ?, ?, '2030-01', ?, 1000000000)`,
    );
    const batch = db.transaction((from) => {
      for (let i = from; i < from + BATCH; i++) {
        const [sourceIndex, contentType, rawBody, normalized] = MIX[i % MIX.length];
        const receivedAt = new Date(Date.parse('2030-01-01T00:00:00.000Z') + Math.floor(i / 10)).toISOString();
        insert.run(`sig_${String(i).padStart(10, '0')}`, `src-${sourceIndex}`, receivedAt, contentType, rawBody, normalized, i + 1);
      }
    });
    for (let i = 0; i < WARM_UP; i += BATCH) batch(i);
    const before = process.cpuUsage();
    for (let i = WARM_UP; i < WARM_UP + ROWS; i += BATCH) batch(i);
    const cpu = process.cpuUsage(before);
    const walPath = path.join(dir, 'log.db-wal');
    const walBytes = statSync(walPath).size;
    const frames = checkpoints ? null : framesByBtree(db, walPath);
    db.close();
    return { us: (cpu.user + cpu.system) / ROWS, walBytes: walBytes / (WARM_UP + ROWS), frames };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The WAL's frames counted by the table or index their page belongs to (SQLite's dbstat). */
function framesByBtree(db, walPath) {
  const owner = new Map(db.prepare('SELECT name, pageno FROM dbstat').all().map((row) => [row.pageno, row.name]));
  const wal = readFileSync(walPath);
  const pageSize = wal.readUInt32BE(8);
  const counts = new Map();
  // A 32-byte file header, then frames of a 24-byte header (the page's number first) and the page.
  for (let offset = 32; offset + 24 + pageSize <= wal.length; offset += 24 + pageSize) {
    const name = owner.get(wal.readUInt32BE(offset)) ?? '(free pages)';
    counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  return [...counts].sort((a, b) => b[1] - a[1]);
}

const timed = run(true);
const wal = run(false);
print(`${checkout}${drop.length ? ` without ${drop.join(', ')}` : ''}: ${timed.us.toFixed(2)} µs of CPU per insert, ${wal.walBytes.toFixed(0)} WAL bytes per insert (no checkpoint)`);
const batches = (WARM_UP + ROWS) / BATCH;
const total = wal.frames.reduce((sum, [, count]) => sum + count, 0);
print(`WAL frames per batch of ${BATCH}: ${(total / batches).toFixed(1)}`);
// sqlite_schema's is page 1, whose header counts the file's pages: written at every COMMIT that grows the file.
// The migrations' own frames (every table and index once) round to 0 per batch and are left out.
for (const [name, count] of wal.frames) if (count / batches >= 0.005) print(`  ${name}: ${(count / batches).toFixed(2)}`);
