// Timestamps what can hold up a signalgate server's answers, per thread (the event loop and the
// inbound thread alike: a worker inherits the flag): each gap over 4 ms between the turns of a
// 1 ms timer (the thread was busy or not scheduled), each garbage collection, and each SQLite
// transaction (better-sqlite3's) that took over 3 ms. One
// JSON line per event, epoch ms, appended to $SOAK_PROBE_FILE (default /tmp/soak-probe.jsonl).
// For reading beside a run's per-request times (BENCH_SOAK_ANSWERS):
//   BENCH_SERVER_NODE_ARGS="--import $PWD/scripts/soak-probe.mjs" node dist/bench/main.js --soak
import fs from 'node:fs';
import { PerformanceObserver, performance } from 'node:perf_hooks';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { threadId } from 'node:worker_threads';
import { createRequire } from 'node:module';

// The server's own copy of better-sqlite3 (the probe may sit in another checkout than the build).
const Database = createRequire(`${process.cwd()}/`)('better-sqlite3');
const file = process.env.SOAK_PROBE_FILE ?? '/tmp/soak-probe.jsonl';
const now = () => performance.timeOrigin + performance.now();
const write = (event) => fs.appendFileSync(file, JSON.stringify({ thread: threadId, pid: process.pid, ...event }) + '\n');

let last = now();
setInterval(() => {
  const at = now();
  if (at - last > 5) write({ kind: 'gap', from: last, ms: at - last });
  last = at;
}, 1).unref();

new PerformanceObserver((list) => {
  for (const entry of list.getEntries()) {
    write({ kind: 'gc', gc: entry.detail?.kind ?? entry.kind, from: performance.timeOrigin + entry.startTime, ms: entry.duration });
  }
}).observe({ entryTypes: ['gc'] });

const transaction = Database.prototype.transaction;
Database.prototype.transaction = function (fn) {
  const wrapped = transaction.call(this, fn);
  const timed = (run, how) =>
    function (...args) {
      const from = now();
      try {
        return run.apply(this, args);
      } finally {
        const ms = now() - from;
        if (ms > 3) write({ kind: 'transaction', how, from, ms });
      }
    };
  const outer = timed(wrapped, 'default');
  for (const how of ['deferred', 'immediate', 'exclusive']) outer[how] = timed(wrapped[how], how);
  outer.default = outer;
  return outer;
};

// The WAL's size every second (the event loop only): past 1,000 pages (about 4 MB), it was not
// restarted from its beginning after a checkpoint.
if (threadId === 0 && process.env.SIGNALGATE_DATA_DIR) {
  const wal = `${process.env.SIGNALGATE_DATA_DIR}/signalgate.db-wal`;
  setInterval(() => {
    try {
      write({ kind: 'wal', from: now(), bytes: fs.statSync(wal).size });
    } catch {
      // Not there yet: the first write creates it.
    }
  }, 1000).unref();
}
