// How much of pg's query results V8's young-generation collections keep alive, with the pool's
// query_timeout ("timeout", as the store's pools have it), without it ("none"), and with the
// timeout and the store's detachResults ("detached"): one page of the big log read in a loop for
// 2 s, in a child process traced with --trace-gc-nvp. Needs the built dist/ and a big-log schema:
//   node scripts/pg-result-retention.mjs bench_big_log_10000000_m14 timeout none detached
import { spawnSync } from 'node:child_process';
import console from 'node:console';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import pg from 'pg';
import { detachResults } from '../dist/store/postgres/detached-results.js';

const [mode, ...rest] = process.argv.slice(2);
if (mode === '--child') {
  const [schema, variant] = rest;
  const url = new URL(process.env.SIGNALGATE_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test');
  url.searchParams.set('options', `-c search_path=${schema}`);
  const pool = new pg.Pool({ connectionString: url.toString(), max: 10, ...(variant !== 'none' && { query_timeout: 10_000 }) });
  if (variant === 'detached') detachResults(pool);
  const sql = 'SELECT s.* FROM signals s ORDER BY s.received_at DESC, s.id DESC LIMIT 51';
  for (let k = 0; k < 50; k++) await pool.query(sql);
  console.log('measuring');
  const started = Date.now();
  let queries = 0;
  while (Date.now() - started < 2000) {
    await pool.query(sql);
    queries++;
  }
  console.log(`queries ${queries}`);
  await pool.end();
} else {
  const schema = mode ?? 'bench_big_log_10000000_m14';
  for (const variant of rest.length > 0 ? rest : ['timeout', 'none', 'detached']) {
    const child = spawnSync(process.execPath, ['--trace-gc-nvp', fileURLToPath(import.meta.url), '--child', schema, variant], { encoding: 'utf8' });
    if (child.status !== 0) throw new Error(child.stderr);
    const lines = child.stdout.split('\n');
    const measured = lines.slice(lines.indexOf('measuring'));
    const field = (line, name) => Number(new RegExp(` ${name}=([\\d.]+)`).exec(line)?.[1] ?? 0);
    const sum = (ls, name) => ls.reduce((s, l) => s + field(l, name), 0);
    const scavenges = measured.filter((l) => l.includes(' gc=s '));
    const full = measured.filter((l) => l.includes(' gc=mc '));
    const queries = /queries (\d+)/.exec(child.stdout)?.[1];
    console.log(
      `${variant}: ${queries} queries, ${scavenges.length} scavenges promoting ${(sum(scavenges, 'promoted') / Math.max(1, scavenges.length) / 1024).toFixed(0)} KB each, ` +
        `${sum(scavenges, 'pause').toFixed(0)} ms of scavenge pauses (longest ${Math.max(0, ...scavenges.map((l) => field(l, 'pause'))).toFixed(1)}), ${full.length} full collections (${sum(full, 'pause').toFixed(0)} ms)`,
    );
  }
}
