import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { compareWithBaseline } from './baseline.js';
import { runAlertToOrder } from './alert-to-order.js';
import { runBasket } from './basket.js';
import { runBigLog } from './big-log.js';
import { runBurst } from './burst.js';
import { runCpuAb } from './cpu-ab.js';
import { runEqualCpu } from './equal-cpu.js';
import { runFixRoundTrip } from './fix-round-trip.js';
import { runHostileRequests } from './hostile-requests.js';
import { summariseProfiles } from './profile-summary.js';
import { runSlowClients } from './slow-clients.js';
import { runSoak } from './soak.js';
import { runStartCpu } from './start-cpu.js';
import { runStoreIngest } from './store-ingest.js';
import { runThroughput } from './throughput.js';

/**
 * `npm run bench [-- FLAGS]`: one flag per scenario, each printing its table, then the figures
 * against the recorded baseline. No flag: throughput on shared cores (the default scenario).
 */
const USAGE =
  'flags: --https (HTTPS rows beside plain HTTP), --retention (ingest with pruning beside ingest without), --equal-cpu (server and wrk pinned to one core each), ' +
  '--profile (with --equal-cpu: CPU profile of the SQLite server), --burst (5,000 signals in one second, 200 agents), ' +
  '--soak (300 signals/s with an agent), --soak-seconds N (default 60), --slow-clients (the load alone and beside 200 connections sending one byte a second), ' +
  '--fix (a signal to a FIX broker and back: hand-off and round trip), --fix-signals N (default 200), ' +
  '--big-log (ingest and every admin page on a store of BENCH_BIG_LOG_SIGNALS signals, default 10,000,000, seeded once and cached), ' +
  "--store-ingest (the store's ingest alone, no HTTP, on an empty and a big store, the log's indexes now and before), " +
  "--cpu-ab (server CPU per request of this build against BENCH_AB_BUILD's, both on one core, alternating rounds), " +
  '--hostile (server CPU and bytes stored per hostile request against an ordinary one), ' +
  '--alert-to-order (POST to the order at the venue: CCXT and FIX idle, a burst across paper agents, per store), ' +
  "--basket (20 symbols posted at once to one agent: each order and ack; the paper agent's sustained rate), " +
  "--start-cpu (CPU per start: serve, a paper agent, loading the ccxt and FIX venues; beside BENCH_AB_BUILD's if set)";

const args = process.argv.slice(2);
const flags = new Set<string>();
let soakSeconds = 60;
let fixSignals = 200;
for (let i = 0; i < args.length; i++) {
  const arg = args[i]!;
  if (arg === '--soak-seconds') {
    soakSeconds = Number(args[++i]);
    if (!Number.isInteger(soakSeconds) || soakSeconds < 1) {
      process.stderr.write(
        `bench: --soak-seconds takes a whole number of seconds, at least 1; got '${args[i] ?? ''}'\n`,
      );
      process.exit(2);
    }
  } else if (arg === '--fix-signals') {
    fixSignals = Number(args[++i]);
    if (!Number.isInteger(fixSignals) || fixSignals < 1) {
      process.stderr.write(
        `bench: --fix-signals takes a whole number of signals, at least 1; got '${args[i] ?? ''}'\n`,
      );
      process.exit(2);
    }
  } else if (
    [
      '--https',
      '--retention',
      '--equal-cpu',
      '--profile',
      '--burst',
      '--soak',
      '--fix',
      '--slow-clients',
      '--big-log',
      '--store-ingest',
      '--cpu-ab',
      '--hostile',
      '--alert-to-order',
      '--basket',
      '--start-cpu',
    ].includes(arg)
  ) {
    flags.add(arg);
  } else {
    process.stderr.write(`bench: unknown argument '${arg}'; ${USAGE}\n`);
    process.exit(2);
  }
}
if (flags.has('--profile') && !flags.has('--equal-cpu')) {
  process.stderr.write('bench: --profile profiles the equal-CPU run: add --equal-cpu\n');
  process.exit(2);
}

const figures = new Map<string, number>();
if (flags.has('--equal-cpu')) {
  const profileDir = flags.has('--profile') ? mkdtempSync(path.join(tmpdir(), 'signalgate-bench-profile-')) : null;
  try {
    const { rows, profiledRequests } = await runEqualCpu(profileDir);
    for (const row of rows) {
      if (row.store === 'bare') continue;
      figures.set(`equal-cpu ${row.store} ratio`, row.ratio);
      figures.set(`equal-cpu ${row.store} p99`, row.p99);
    }
    if (profileDir !== null) process.stdout.write(summariseProfiles(profileDir, profiledRequests));
  } finally {
    if (profileDir !== null) rmSync(profileDir, { recursive: true, force: true });
  }
}
if (flags.has('--burst')) {
  for (const row of await runBurst()) {
    const key = `burst ${row.store} ${row.transport}`;
    figures.set(`${key} answer p99`, row.answerP99);
    figures.set(`${key} over 3 s %`, 100 * row.over3s);
    figures.set(`${key} hand-off p99`, row.handoffP99);
  }
}
if (flags.has('--soak')) {
  const row = await runSoak(soakSeconds);
  figures.set('soak p99', row.p99);
  figures.set('soak max', row.max);
  figures.set('soak longest stall', row.stall);
}
if (flags.has('--fix')) {
  const row = await runFixRoundTrip(fixSignals);
  figures.set('fix hand-off p99', row.handoffP99);
  figures.set('fix round trip p99', row.roundTripP99);
}
if (flags.has('--alert-to-order')) {
  for (const row of await runAlertToOrder()) {
    // A burst on cores kept busy (BENCH_A2O_BUSY) is its own figure, with no baseline.
    const burst = `${row.path.includes('one process') ? 'burst one process' : 'burst'}${row.busy ? ` cores ${row.busy}% busy` : ''}`;
    const key = `alert-to-order ${row.store} ${row.path.startsWith('paper burst') ? burst : row.path}`;
    figures.set(`${key} p50`, row.p50);
    figures.set(`${key} p99`, row.p99);
    figures.set(`${key} max`, row.max);
    // The burst is CPU-bound: its CPU per signal moves before its latencies show it.
    if (row.burstCpu) figures.set(`${key} CPU per signal`, row.burstCpu.server + row.burstCpu.agents);
  }
}
if (flags.has('--basket')) {
  const basket = await runBasket();
  for (const row of basket.rows) {
    figures.set(`basket ${row.venue} last order`, row.lastOrder);
    figures.set(`basket ${row.venue} last ack`, row.lastAck);
  }
  figures.set('basket paper sustained signals/s', basket.sustainedRate);
}
if (flags.has('--slow-clients')) {
  const [quiet, slow] = await runSlowClients();
  figures.set('slow clients req/s ratio', slow!.rps / quiet!.rps);
  figures.set('slow clients p99', slow!.p99);
}
if (flags.has('--store-ingest')) await runStoreIngest();
if (flags.has('--cpu-ab')) await runCpuAb();
if (flags.has('--start-cpu')) for (const [name, ms] of await runStartCpu()) figures.set(name, ms);
if (flags.has('--hostile')) await runHostileRequests();
if (flags.has('--big-log')) {
  const { pages, ingest } = await runBigLog();
  for (const row of ingest) figures.set(`big-log ${row.store} ingest vs empty`, row.big / row.empty);
  for (const store of new Set(pages.map((p) => p.store))) {
    figures.set(
      `big-log ${store} worst page p99`,
      Math.max(...pages.filter((p) => p.store === store).map((p) => p.p99)),
    );
  }
}
if (flags.size === 0 || flags.has('--https') || flags.has('--retention'))
  await runThroughput(flags.has('--https'), flags.has('--retention'));
compareWithBaseline(figures);
