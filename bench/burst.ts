import { percentile } from './bench-server.js';
import { type AgentLoadRun, type BenchStore, type BenchTransport, runAgentLoad } from './agent-load.js';

/**
 * `npm run bench -- --burst`: the close of a bar. 5,000 signals from 1,000 sources scheduled
 * evenly over one second and sent on schedule (open loop), 200 agents (5 sources each, one
 * account each) connected and acknowledging, once by WebSocket and once by long-poll, on SQLite
 * and on PostgreSQL when reachable. Answer latency is from the scheduled send time; hand-off is
 * from the sender holding the answer to the agent client holding the signal.
 *
 * The measured burst meets a server that has already served: the same server, agents and sources
 * first take BENCH_BURST_WARMUP bursts of the same shape (each held and acknowledged before the
 * next), as a real server meets a bar's close after hours of earlier ones. A fresh server spends
 * the burst compiling its hot paths (V8's optimising compiler on the server's cores), which is
 * not the case the targets describe. `BENCH_BURST_WARMUP=0` gives the cold figure.
 */
const SIGNALS = Number(process.env.BENCH_BURST_SIGNALS ?? 5000);
const AGENTS = 200;
const SOURCES_PER_AGENT = 5;
const WINDOW_MS = 1000;
const TRADINGVIEW_GIVES_UP_MS = 3000;
/** Warm-up bursts before the measured one (BENCH_BURST_WARMUP); 0 measures a fresh server. */
const WARMUPS = Number(process.env.BENCH_BURST_WARMUP ?? 2);

export interface BurstRow {
  store: BenchStore;
  transport: BenchTransport;
  /** Warm-up bursts the server served before the measured one. */
  warmups: number;
  /** The servers' CPU ms (user + system, /proc) over the measured burst, to every signal held. */
  serverCpuMs: number;
  accepted: number;
  failed: number;
  answerP50: number;
  answerP99: number;
  answerMax: number;
  over3s: number;
  handoffP50: number;
  handoffP99: number;
  /** Accepted signals no agent held by the end. */
  notHeld: number;
  /** The hand-off split, p50 and p99 of each part: see `handoffSplit`. */
  split: HandoffSplit;
  /** Acks the server did not answer 200. */
  ackFailures: number;
  /** How late the sender wrote its requests (its timer, and waiting for a free connection): p99 ms. */
  sendLateP99: number;
}

/**
 * Where a hand-off went, per signal: `carried`, from the 202 to the message bringing the
 * signal arriving at its agent (the server's part); of it, `notAsked`, how long after the 202
 * the agent wrote the poll that brought it (long-poll: it was still acknowledging earlier
 * signals; 0 when the poll was already waiting); `behindAcks`, from that message's arrival to
 * the agent taking the signal, after acknowledging those before it in the message.
 */
export interface HandoffSplit {
  carried: [number, number];
  notAsked: [number, number];
  behindAcks: [number, number];
}

/** Which rows to run (BENCH_BURST_STORES, BENCH_BURST_TRANSPORTS: comma-separated), all by default. */
const STORES = (process.env.BENCH_BURST_STORES ?? 'sqlite,postgres,postgres-2').split(',') as BenchStore[];
const TRANSPORTS = (process.env.BENCH_BURST_TRANSPORTS ?? 'websocket,long-poll').split(',') as BenchTransport[];

export async function runBurst(): Promise<BurstRow[]> {
  if (!Number.isInteger(WARMUPS) || WARMUPS < 0)
    throw new Error(
      `BENCH_BURST_WARMUP must be a whole number of warm-up bursts, 0 or more, got '${process.env.BENCH_BURST_WARMUP}'`,
    );
  const rows: BurstRow[] = [];
  for (const store of STORES) {
    for (const transport of TRANSPORTS) {
      const run = await runAgentLoad(
        store,
        transport,
        AGENTS,
        SOURCES_PER_AGENT,
        (keys) =>
          Array.from({ length: SIGNALS }, (_, i) => ({
            at: (i * WINDOW_MS) / SIGNALS,
            path: `/api/inbound/${keys[i % keys.length]!}`,
            body: i % 2 === 0 ? 'EURUSD,buy,vol=0.01,sl_pips=20' : 'EURUSD,closebuy',
          })),
        WARMUPS,
      );
      if (run === null) {
        process.stdout.write('PostgreSQL not reachable: no PostgreSQL burst rows\n');
        break;
      }
      const row = summarise(store, transport, run);
      if (row.failed > 0) {
        // What the failures were (status 0: no answer), so a run's failures can be told apart.
        const statuses = new Map<number, number>();
        for (const a of run.answers) if (a.status !== 202) statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
        process.stdout.write(
          `burst ${store} ${transport}: failed by status ${[...statuses].map(([s, n]) => `${s}: ${n}`).join(', ')}\n`,
        );
      }
      const ms = ([p50, p99]: [number, number]) => `${p50.toFixed(1)} / ${p99.toFixed(1)}`;
      process.stdout.write(
        `burst ${store} ${transport}: answer p99 ${row.answerP99.toFixed(0)} ms, hand-off p99 ${row.handoffP99.toFixed(0)} ms, server CPU ${row.serverCpuMs} ms; ` +
          `hand-off split p50 / p99 ms: 202 to the message at the agent ${ms(row.split.carried)} (the poll not yet asked ${ms(row.split.notAsked)}), ` +
          `behind earlier acks ${ms(row.split.behindAcks)}; sender late p99 ${row.sendLateP99.toFixed(1)} ms; acks failed ${row.ackFailures}\n`,
      );
      rows.push(row);
    }
  }
  process.stdout.write(
    `\nburst: ${SIGNALS} signals from ${AGENTS * SOURCES_PER_AGENT} sources on schedule over ${WINDOW_MS} ms, ${AGENTS} agents acknowledging, node ${process.version}\n` +
      `| store | transport | warm-up bursts | accepted | failed | answer p50 ms | answer p99 ms | answer max ms | over 3 s | hand-off p50 ms | hand-off p99 ms | not held | server CPU ms |\n` +
      `|---|---|---|---|---|---|---|---|---|---|---|---|---|\n`,
  );
  for (const r of rows) {
    process.stdout.write(
      `| ${r.store} | ${r.transport} | ${r.warmups === 0 ? '0 (cold)' : r.warmups} | ${r.accepted} | ${r.failed} | ${r.answerP50.toFixed(0)} | ${r.answerP99.toFixed(0)} | ${r.answerMax.toFixed(0)} | ` +
        `${(100 * r.over3s).toFixed(1)} % | ${r.handoffP50.toFixed(1)} | ${r.handoffP99.toFixed(1)} | ${r.notHeld} | ${r.serverCpuMs} |\n`,
    );
  }
  return rows;
}

function summarise(store: BenchStore, transport: BenchTransport, run: AgentLoadRun): BurstRow {
  const ok = run.answers.filter((a) => a.status === 202);
  const latency = ok.map((a) => a.answeredAt - a.scheduledAt).sort((a, b) => a - b);
  const handoff: number[] = [];
  let notHeld = 0;
  for (const answer of ok) {
    const heldAt = run.arrivals[answer.id!];
    if (heldAt === undefined) notHeld++;
    else handoff.push(heldAt - answer.answeredAt);
  }
  handoff.sort((a, b) => a - b);
  const carried: number[] = [];
  const notAsked: number[] = [];
  const behindAcks: number[] = [];
  for (const answer of ok) {
    const carrier = run.carriers[answer.id!];
    const heldAt = run.arrivals[answer.id!];
    if (carrier === undefined || heldAt === undefined) continue;
    carried.push(carrier.receivedAt - answer.answeredAt);
    notAsked.push(carrier.askedAt === null ? 0 : Math.max(0, carrier.askedAt - answer.answeredAt));
    behindAcks.push(heldAt - carrier.receivedAt);
  }
  const p50p99 = (values: number[]): [number, number] => {
    values.sort((a, b) => a - b);
    return [percentile(values, 0.5), percentile(values, 0.99)];
  };
  const late = run.answers.filter((a) => !Number.isNaN(a.sentAt)).map((a) => a.sentAt - a.scheduledAt);
  // A failed request (no answer, or not a 202) counts as over 3 s: the sender lost it.
  const over = run.answers.filter(
    (a) => a.status !== 202 || a.answeredAt - a.scheduledAt > TRADINGVIEW_GIVES_UP_MS,
  ).length;
  return {
    store,
    transport,
    warmups: WARMUPS,
    serverCpuMs: run.serverCpuMs,
    accepted: ok.length,
    failed: run.answers.length - ok.length,
    answerP50: percentile(latency, 0.5),
    answerP99: percentile(latency, 0.99),
    answerMax: latency[latency.length - 1] ?? NaN,
    over3s: over / run.answers.length,
    handoffP50: percentile(handoff, 0.5),
    handoffP99: percentile(handoff, 0.99),
    notHeld,
    split: { carried: p50p99(carried), notAsked: p50p99(notAsked), behindAcks: p50p99(behindAcks) },
    ackFailures: run.ackFailures,
    sendLateP99: p50p99(late)[1],
  };
}
