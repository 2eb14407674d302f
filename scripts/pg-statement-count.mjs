// Counts the statements a signalgate server sends to PostgreSQL, by their first 60 characters,
// and how long its pools made callers wait for a connection; written at exit to
// $PG_STATEMENT_COUNT_DIR (default /tmp) as pg-statements-<pid>.txt. For measuring beside a run:
//   BENCH_SERVER_NODE_ARGS="--import $PWD/scripts/pg-statement-count.mjs" node dist/bench/main.js --burst
// Counts do not depend on the machine's load, unlike the run's latencies.
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { setInterval } from 'node:timers';
import pg from 'pg';

const counts = new Map();
const pools = new Set();
const waits = [];
let mostWaiting = 0;

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  const text = typeof config === 'string' ? config : config?.text ?? '?';
  const key = text.replace(/\s+/g, ' ').slice(0, 60);
  counts.set(key, (counts.get(key) ?? 0) + 1);
  return query.call(this, config, ...rest);
};

// Promise-form connect() only (the ingest's); pool.query() connects by callback.
const connect = pg.Pool.prototype.connect;
pg.Pool.prototype.connect = function (...args) {
  pools.add(this);
  const started = Date.now();
  const connecting = connect.apply(this, args);
  connecting?.then?.(() => waits.push(Date.now() - started), () => undefined);
  return connecting;
};
setInterval(() => {
  for (const pool of pools) mostWaiting = Math.max(mostWaiting, pool.waitingCount);
}, 20).unref();

process.on('exit', () => {
  waits.sort((a, b) => a - b);
  const at = (q) => waits[Math.floor(q * (waits.length - 1))];
  const lines = [...counts].sort((a, b) => b[1] - a[1]).map(([key, n]) => `${String(n).padStart(7)}  ${key}`);
  const file = path.join(process.env.PG_STATEMENT_COUNT_DIR ?? '/tmp', `pg-statements-${process.pid}.txt`);
  fs.writeFileSync(
    file,
    `connect() waits: ${waits.length}, p50 ${at(0.5)} ms, p99 ${at(0.99)} ms, max ${at(1)} ms; at most ${mostWaiting} callers waiting for a pool\n${lines.join('\n')}\n`,
  );
});
