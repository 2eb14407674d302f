import { writeFileSync } from 'node:fs';
import { percentile } from './bench-server.js';
import { runAgentLoad } from './agent-load.js';

/**
 * `npm run bench -- --soak [--soak-seconds N]`: a steady 300 signals a second on schedule (open
 * loop) for N seconds (default 60) on SQLite, one agent connected by WebSocket and acknowledging.
 * Reports answer p99 and max, and the longest stall: the longest time in which requests were
 * outstanding and no answer came back, with when it began (seconds into the run).
 */
const RATE = 300;

export interface SoakRow {
  seconds: number;
  sent: number;
  failed: number;
  p50: number;
  p99: number;
  max: number;
  maxAt: number;
  stall: number;
  stallAt: number;
  handoffP99: number;
}

export async function runSoak(seconds: number): Promise<SoakRow> {
  const count = RATE * seconds;
  const run = await runAgentLoad('sqlite', 'websocket', 1, 4, (keys) =>
    Array.from({ length: count }, (_, i) => ({
      at: (i * 1000) / RATE,
      path: `/api/inbound/${keys[i % keys.length]!}`,
      body: i % 2 === 0 ? 'EURUSD,buy,vol=0.01,sl_pips=20' : 'EURUSD,closebuy',
    })),
  );
  if (run === null) throw new Error('the soak runs on SQLite, which is always there');
  const startedAt = run.startAt;
  // Every request's times (epoch ms), to read beside the server's own (strace, or a probe loaded into the server with BENCH_SERVER_NODE_ARGS).
  if (process.env.BENCH_SOAK_ANSWERS) {
    writeFileSync(
      process.env.BENCH_SOAK_ANSWERS,
      JSON.stringify({ startAt: startedAt, answers: run.answers, arrivals: run.arrivals }),
    );
  }
  const ok = run.answers.filter((a) => a.status === 202);
  const latency = ok.map((a) => a.answeredAt - a.scheduledAt);
  const sorted = [...latency].sort((a, b) => a - b);
  const maxIndex = latency.indexOf(sorted[sorted.length - 1]!);
  // Longest stall: between two consecutive answers, while some request already sent waited.
  const events = ok.map((a) => a.answeredAt).sort((a, b) => a - b);
  let stall = 0;
  let stallAt = 0;
  for (let i = 1; i < events.length; i++) {
    const gap = events[i]! - events[i - 1]!;
    // A request is sent every 3.3 ms, so in any longer gap sent requests waited unanswered.
    if (gap > stall) {
      stall = gap;
      stallAt = events[i - 1]! - startedAt;
    }
  }
  const handoff = ok
    .filter((a) => run.arrivals[a.id!] !== undefined)
    .map((a) => run.arrivals[a.id!]! - a.answeredAt)
    .sort((a, b) => a - b);
  const row: SoakRow = {
    seconds,
    sent: run.answers.length,
    failed: run.answers.length - ok.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted[sorted.length - 1] ?? NaN,
    maxAt: (ok[maxIndex]?.scheduledAt ?? startedAt) - startedAt,
    stall,
    stallAt,
    handoffP99: percentile(handoff, 0.99),
  };
  process.stdout.write(
    `\nsoak: ${RATE} signals/s on schedule for ${seconds} s, SQLite, one agent by WebSocket, node ${process.version}\n` +
      `| sent | failed | p50 ms | p99 ms | max ms (at s) | longest stall ms (at s) | hand-off p99 ms |\n|---|---|---|---|---|---|---|\n` +
      `| ${row.sent} | ${row.failed} | ${row.p50.toFixed(1)} | ${row.p99.toFixed(1)} | ${row.max.toFixed(0)} (${(row.maxAt / 1000).toFixed(1)}) | ` +
      `${row.stall.toFixed(0)} (${(row.stallAt / 1000).toFixed(1)}) | ${row.handoffP99.toFixed(1)} |\n`,
  );
  process.stdout.write(handoffWindows(ok, run.arrivals, startedAt));
  process.stdout.write(eventLoopReport(run.metrics));
  return row;
}

/** Hand-off per 2-second window of the schedule, median / max ms: when in the run the agent fell behind. */
function handoffWindows(
  ok: { id: string | null; scheduledAt: number; answeredAt: number }[],
  arrivals: Record<string, number>,
  startedAt: number,
): string {
  const windows: number[][] = [];
  for (const a of ok) {
    const heldAt = arrivals[a.id!];
    if (heldAt === undefined) continue;
    const w = Math.floor((a.scheduledAt - startedAt) / 2000);
    (windows[w] ??= []).push(heldAt - a.answeredAt);
  }
  const cells = windows.map((list, w) => {
    const sorted = (list ?? []).sort((x, y) => x - y);
    return `${w * 2}s ${percentile(sorted, 0.5).toFixed(1)}/${(sorted[sorted.length - 1] ?? NaN).toFixed(0)}`;
  });
  return `hand-off by 2 s window (median/max ms): ${cells.join(', ')}\n`;
}

/**
 * What the server's own metrics say of the run: the event loop's longest delay, and garbage
 * collections by kind, with how many took over 100 ms. A stall as long as the event loop's
 * longest delay happened on the event loop (GC or synchronous work there); a longer one was
 * elsewhere (the inbound thread, the disk).
 */
function eventLoopReport(metrics: string): string {
  const value = (name: string) =>
    metrics
      .split('\n')
      .find((line) => line.startsWith(name + ' ') || line.startsWith(name + '{'))
      ?.split(' ')
      .pop();
  const lagMax = Number(value('nodejs_eventloop_lag_max_seconds')) * 1000;
  let out = `server event loop: longest delay ${lagMax.toFixed(0)} ms (nodejs_eventloop_lag_max_seconds, since the start)\n`;
  for (const kind of ['minor', 'major', 'incremental']) {
    const count = Number(value(`nodejs_gc_duration_seconds_count{kind="${kind}"}`) ?? 0);
    const sum = Number(value(`nodejs_gc_duration_seconds_sum{kind="${kind}"}`) ?? 0);
    const under100 = Number(value(`nodejs_gc_duration_seconds_bucket{le="0.1",kind="${kind}"}`) ?? count);
    out += `server GC ${kind}: ${count} collections, ${(sum * 1000).toFixed(0)} ms in all, ${count - under100} over 100 ms\n`;
  }
  return out;
}
