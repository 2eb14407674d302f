// Where a PostgreSQL server's long-poll hand-outs spend their time: for each poll's take, its wait
// in the hand-out batches (`pollTakes`), its batch's wait for a delivery-pool connection and the
// statement itself; the same for the grouped acks, the requests' token lookups (each call's whole
// time too) and presence writes; the delivery pool's waiting callers and the
// event loop's delay (a 5 ms timer), all with timestamps so a run's bursts can be told apart.
// Written at exit to $PG_POLL_HANDOFF_DIR (default /tmp) as pg-poll-handoff-<pid>.json, read by
// scripts/pg-poll-handoff-summary.mjs. For measuring beside a run:
//   BENCH_SERVER_NODE_ARGS="--import $PWD/scripts/pg-poll-handoff.mjs" BENCH_BURST_STORES=postgres \
//   BENCH_BURST_TRANSPORTS=long-poll node dist/bench/main.js --burst
import fs from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import { performance } from 'node:perf_hooks';
import { setInterval } from 'node:timers';
import { pathToFileURL } from 'node:url';
import pg from 'pg';

const now = () => performance.timeOrigin + performance.now();
const takes = [];
const statements = [];
const lags = [];
const waiting = [];
const pools = new Set();

// The statements timed: the polls' hand-outs, the ack groups, and what every agent request does
// beside them (its token's lookup, its presence write).
const RECORDED = new Set(['signalgate-hand-out-poll', 'signalgate-grouped-acks', 'signalgate-find-agent-identities', 'signalgate-touch-agents']);

// A pool's query passes its config object on to the client's: the gap is the wait for a connection.
const calledAt = new WeakMap();
const poolQuery = pg.Pool.prototype.query;
pg.Pool.prototype.query = function (config, ...rest) {
  pools.add(this);
  if (typeof config === 'object' && config !== null) calledAt.set(config, now());
  return poolQuery.call(this, config, ...rest);
};
const clientQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function (config, ...rest) {
  const name = typeof config === 'object' && config !== null ? config.name : undefined;
  if (!RECORDED.has(name)) return clientQuery.call(this, config, ...rest);
  const started = now();
  const record = { name, called: calledAt.get(config) ?? started, started, done: 0, size: config.values?.[0]?.length ?? 0 };
  statements.push(record);
  // A pool's query passes a callback; a client's own call gets a promise.
  const last = rest.length - 1;
  if (typeof rest[last] === 'function') {
    const callback = rest[last];
    rest[last] = (err, res) => {
      record.done = err ? -now() : now();
      return callback(err, res);
    };
    return clientQuery.call(this, config, ...rest);
  }
  const result = clientQuery.call(this, config, ...rest);
  result?.then?.(
    () => (record.done = now()),
    () => (record.done = -now()),
  );
  return result;
};

const dist = path.dirname(path.dirname(process.argv[1]));
const { PostgresDeliveries } = await import(pathToFileURL(path.join(dist, 'store', 'postgres', 'deliveries.js')).href);
const { Batches } = await import(pathToFileURL(path.join(dist, 'store', 'postgres', 'batches.js')).href);

const { PostgresAgents } = await import(pathToFileURL(path.join(dist, 'store', 'postgres', 'agents.js')).href);

// Each request's token lookup, from the call (the request's arrival, give or take a turn) to its answer.
const lookups = [];
const findAgent = PostgresAgents.prototype.findAgentByTokenHash;
PostgresAgents.prototype.findAgentByTokenHash = async function (tokenHash) {
  const called = now();
  try {
    return await findAgent.call(this, tokenHash);
  } finally {
    lookups.push([called, now()]);
  }
};

const submittedAt = new WeakMap();
const submit = Batches.prototype.submit;
Batches.prototype.submit = function (item) {
  if (typeof item === 'object' && item !== null) submittedAt.set(item, now());
  return submit.call(this, item);
};
const handOut = PostgresDeliveries.prototype.handOutToPolls;
PostgresDeliveries.prototype.handOutToPolls = async function (batch) {
  const started = now();
  const results = await handOut.call(this, batch);
  const done = now();
  batch.forEach((take, i) => {
    const value = results[i]?.value;
    takes.push({ submitted: submittedAt.get(take) ?? started, started, done, batch: batch.length, signals: value?.signals?.length ?? 0 });
  });
  return results;
};

let expected = now() + 5;
setInterval(() => {
  const at = now();
  lags.push([at, at - expected]);
  expected = at + 5;
  for (const pool of pools) if (pool.waitingCount > 0) waiting.push([at, pool.options.max, pool.waitingCount, pool.totalCount - pool.idleCount]);
}, 5).unref();

process.on('exit', () => {
  const file = path.join(process.env.PG_POLL_HANDOFF_DIR ?? '/tmp', `pg-poll-handoff-${process.pid}.json`);
  fs.writeFileSync(file, JSON.stringify({ takes, statements, lags, waiting, lookups }));
});
