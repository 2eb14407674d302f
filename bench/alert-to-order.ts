import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { QuickFixExecutor } from '../test/agent/support/fix-counterparties.js';
import { BinanceUsdmExchange } from '../test/fakes/binance-usdm-exchange.js';
import { freePort } from '../test/support/free-port.js';
import type { BenchServer } from './bench-server.js';
import { busyCores } from './busy-cores.js';
import { loadAverage } from './load-average.js';
import { type Scheduled, sendOnSchedule } from './open-loop.js';
import { cpuMillis, cpuSince, descendantCpu } from './process-cpu.js';
import {
  AgentFleet,
  benchPostgres,
  executed,
  now,
  postSignal,
  provision,
  serverOn,
  settledSignal,
  spread,
  type VenueBenchStore,
} from './venue-bench.js';

const IDLE_SIGNALS = Number(process.env.BENCH_A2O_IDLE ?? 100);
/** How long an idle path waits, after flushing the disks, before its first signal. */
const SETTLE_MS = 3000;
const WARM_UP = 5;
const BURST_SIGNALS = Number(process.env.BENCH_A2O_BURST ?? 1000);
const BURST_AGENTS = Number(process.env.BENCH_A2O_AGENTS ?? 50);
/** The burst's sender's connections: a signal due while all are busy waits for one, counted against the path. */
const BURST_CONNECTIONS = 64;
/** Bursts of the same shape served before the measured one; 0 measures processes that served one signal each. */
const BURST_WARMUPS = Number(process.env.BENCH_A2O_WARMUP ?? 1);
/** Percent of every core other processes keep busy through the bursts (`busy-cores.ts`): the margin a slower machine would eat. */
const BURST_BUSY = Number(process.env.BENCH_A2O_BUSY ?? 0);
const CCXT_KEYS = { SIGNALGATE_CCXT_API_KEY: 'bench-key', SIGNALGATE_CCXT_SECRET: 'bench-secret' };
const FIX_COMP_ID = 'BENCHAGENT';
const STORES = (process.env.BENCH_A2O_STORES ?? 'sqlite,postgres').split(',') as VenueBenchStore[];
const PATHS = (process.env.BENCH_A2O_PATHS ?? 'ccxt,fix,burst,burst-together').split(',');
/** Node flags for the burst's first agent (BENCH_A2O_AGENT_NODE_ARGS, space-separated), e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`. */
const PROFILED_AGENT_NODE_ARGS = (process.env.BENCH_A2O_AGENT_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
/** Node flags for every burst agent (BENCH_A2O_AGENTS_NODE_ARGS), e.g. `--perf-basic-prof` for a system-wide `perf record`. */
const AGENTS_NODE_ARGS = (process.env.BENCH_A2O_AGENTS_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');

export interface AlertToOrderRow {
  store: VenueBenchStore;
  /** `ccxt idle`, `fix idle`, `paper burst`. */
  path: string;
  signals: number;
  p50: number;
  p99: number;
  max: number;
  /** The agent's process CPU per measured signal (ms), where measured. */
  agentCpu?: number;
  /** The burst's CPU per signal (ms): the server's, its agents' together, the database's (the PostgreSQL cluster this run started; 0 on SQLite), this process's. */
  burstCpu?: BurstCpu;
  /** Percent of every core other processes kept busy through the burst (BENCH_A2O_BUSY), when any. */
  busy?: number;
}

/**
 * `npm run bench -- --alert-to-order`: from the start of the inbound POST to the signal's order
 * at the counterparty, through a real server and real agent processes, per store.
 * - CCXT idle: one agent on the Binance USDⓈ-M test exchange (in this process, answering in
 *   about a millisecond); the order's arrival is the exchange's own request log (`at`).
 * - FIX idle: one agent on QuickFIX's executor through a relay in this process that stamps each
 *   NewOrderSingle (35=D) as it passes; limit entries, the only orders the executor fills.
 * - Burst: BURST_SIGNALS market entries scheduled evenly over one second across BURST_AGENTS
 *   paper agents (a paper agent is a process that costs no venue: fifty CCXT agents would each
 *   poll the one test exchange in this process, which would measure the exchange); the order's
 *   time is the agent's `sentAt` from its acknowledgement. The measured burst follows
 *   BURST_WARMUPS of the same shape, as `--burst` does: agents that ran for a while have met
 *   bursts before, and a process's first twenty signals run much of its code before V8 compiles
 *   it; `BENCH_A2O_WARMUP=0` gives the figure of processes that served one signal each.
 * Idle: IDLE_SIGNALS market (FIX: limit) entries one at a time after WARM_UP, on a settled
 *   machine: the disks flushed (`sync`) and SETTLE_MS waited first, so the writes a burst before
 *   it left behind (agent journals, a store's files, removed directories) do not stall its
 *   commits; 100 of them, so p99 is not the single slowest.
 */
export async function runAlertToOrder(): Promise<AlertToOrderRow[]> {
  const rows: AlertToOrderRow[] = [];
  const postgres = STORES.includes('postgres') ? await benchPostgres() : null;
  try {
    for (const store of STORES) {
      const url = postgres?.url ?? null;
      if (PATHS.includes('ccxt'))
        rows.push(await withServer(store, url, async (server) => ccxtIdle(store, await settled(server))));
      if (PATHS.includes('fix'))
        rows.push(await withServer(store, url, async (server) => fixIdle(store, await settled(server))));
      if (PATHS.includes('burst'))
        rows.push(await withServer(store, url, (server) => paperBurst(store, server, false)));
      if (PATHS.includes('burst-together'))
        rows.push(await withServer(store, url, (server) => paperBurst(store, server, true)));
    }
  } finally {
    await postgres?.stop();
  }
  process.stdout.write(
    `\nalert → order: the inbound POST's start to the order at the counterparty, real server and agent processes, node ${process.version}\n` +
      `BENCH_A2O_STORES=${STORES.join(',')} BENCH_A2O_PATHS=${PATHS.join(',')}; idle: ${IDLE_SIGNALS} entries one at a time after ${WARM_UP}; burst: ${BURST_SIGNALS} market entries over 1 s across ${BURST_AGENTS} paper agents after ${BURST_WARMUPS} such burst(s) (BENCH_A2O_WARMUP; order = the agent's sentAt)${BURST_BUSY > 0 ? `, every core ${BURST_BUSY}% busy with other processes through the bursts (BENCH_A2O_BUSY)` : ''}\n\n` +
      `| store | path | signals | p50 ms | p99 ms | max ms | agent CPU per signal | burst CPU per signal: server, agents, database, bench |\n|---|---|---|---|---|---|---|---|\n` +
      rows
        .map(
          (r) =>
            `| ${r.store} | ${r.path} | ${r.signals} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ${r.agentCpu === undefined ? '' : `${r.agentCpu.toFixed(2)} ms`} | ${r.burstCpu === undefined ? '' : `${r.burstCpu.server.toFixed(2)}, ${r.burstCpu.agents.toFixed(2)}, ${r.burstCpu.database.toFixed(2)}, ${r.burstCpu.bench.toFixed(2)} ms`} |`,
        )
        .join('\n') +
      `\nload average at the end: ${loadAverage()}\n`,
  );
  return rows;
}

/**
 * One burst: BURST_SIGNALS market entries scheduled evenly over one second, the agents' in turn,
 * sent open loop over BURST_CONNECTIONS kept-alive connections on plain sockets
 * (`sendOnSchedule`), as the throughput benchmark sends: node's fetch spent about 0.4 ms of CPU
 * a signal on the two cores the path under test runs on. Resolves once every one settled.
 * While it runs, only each agent's last signal is asked after, ten times a second: reading every
 * signal as it settles put this process's reads and the server's answers into the burst measured.
 */
async function burst(server: BenchServer, agents: { authKey: string }[]): Promise<{ id: string; scheduled: number }[]> {
  const schedule: Scheduled[] = Array.from({ length: BURST_SIGNALS }, (_, i) => ({
    at: (1000 * i) / BURST_SIGNALS,
    path: `/api/inbound/${agents[i % agents.length]!.authKey}`,
    body: 'EURUSD,buy,vol=0.01',
  }));
  const { answers } = await sendOnSchedule([server.url], schedule, BURST_CONNECTIONS);
  const sent = answers.map((answer, i) => {
    if (answer.status !== 202 || answer.id === null)
      throw new Error(`burst signal ${i}: answered ${answer.status || 'nothing'}, not 202 with an id`);
    return { id: answer.id, scheduled: answer.scheduledAt };
  });
  // An agent carries its signals out one after another (one symbol): its last settled, all are.
  for (const { id } of sent.slice(-agents.length)) await settledSignal(server, id, 120_000, 100);
  return sent;
}

/** Each signal's time from its schedule to its order (the agent's `sentAt`). */
async function orderTimes(server: BenchServer, sent: { id: string; scheduled: number }[]): Promise<number[]> {
  const times: number[] = [];
  for (const { id, scheduled } of sent) {
    const delivery = executed(await settledSignal(server, id, 120_000));
    const sentAt = delivery.timings?.sentAt;
    if (!sentAt) throw new Error(`signal ${id} was acknowledged without the time its order left`);
    // Latency from the scheduled time: a POST the sender started late counts against the path.
    times.push(Date.parse(sentAt) - scheduled);
  }
  return times;
}

interface BurstCpu {
  server: number;
  agents: number;
  database: number;
  bench: number;
}

/**
 * CPU ms so far of the server, of the fleet's agents together, of this process, and of each
 * process of the PostgreSQL cluster this run started (the store's share of the work: on
 * PostgreSQL the server's own figure leaves it out; 0 on a database given by URL).
 */
function burstCpu(
  server: BenchServer,
  fleet: AgentFleet,
): { own: Omit<BurstCpu, 'database'>; postgres: Map<number, number> } {
  const own = process.cpuUsage();
  return {
    own: {
      server: cpuMillis(server.pid),
      agents: fleet.pids().reduce((sum, pid) => sum + cpuMillis(pid), 0),
      bench: (own.user + own.system) / 1000,
    },
    postgres: descendantCpu('postgres'),
  };
}

async function withServer<T>(
  store: VenueBenchStore,
  pgUrl: string | null,
  run: (server: BenchServer) => Promise<T>,
): Promise<T> {
  const server = await serverOn(store, pgUrl);
  try {
    return await run(server);
  } finally {
    await server.stop();
  }
}

async function ccxtIdle(store: VenueBenchStore, server: BenchServer): Promise<AlertToOrderRow> {
  const exchange = await BinanceUsdmExchange.start({
    apiKey: CCXT_KEYS.SIGNALGATE_CCXT_API_KEY,
    secret: CCXT_KEYS.SIGNALGATE_CCXT_SECRET,
    wallet: 10_000_000,
  });
  const fleet = new AgentFleet();
  try {
    const [agent] = await provision(server, 'a2o-ccxt', 1);
    const agentProcess = await fleet.start(
      server,
      agent!.token,
      ['--venue', 'ccxt', '--exchange', 'binanceusdm', '--proxy-url', exchange.url],
      CCXT_KEYS,
    );
    const times: number[] = [];
    let cpuBefore = 0;
    for (let i = 0; i < WARM_UP + IDLE_SIGNALS; i++) {
      if (i === WARM_UP) cpuBefore = cpuMillis(agentProcess.child.pid!);
      const orders = exchange.requests('POST', '/fapi/v1/order').length;
      const posted = await postSignal(server.url, agent!.authKey, 'BTCUSDT,buy,vol=0.003');
      executed(await settledSignal(server, posted.id));
      const order = exchange.requests('POST', '/fapi/v1/order')[orders];
      if (order === undefined) throw new Error(`signal ${posted.id} reached the exchange as no order`);
      if (i >= WARM_UP) times.push(order.at - posted.startedAt);
    }
    const agentCpu = (cpuMillis(agentProcess.child.pid!) - cpuBefore) / times.length;
    return { store, path: 'ccxt idle', signals: times.length, ...spread(times), agentCpu };
  } finally {
    await fleet.stopAll();
    await exchange.stop();
  }
}

/** The disks flushed and SETTLE_MS waited: what an idle path starts from. */
async function settled<T>(value: T): Promise<T> {
  execFileSync('sync');
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  return value;
}

/** A TCP relay to the executor that stamps each NewOrderSingle the agent sends as it passes. */
async function stampingRelay(target: number): Promise<{ port: number; orders: number[]; close: () => void }> {
  const orders: number[] = [];
  const port = await freePort();
  const sockets = new Set<net.Socket>();
  const relay = net.createServer((agentSide) => {
    const executorSide = net.connect(target, '127.0.0.1');
    sockets.add(agentSide).add(executorSide);
    agentSide.on('data', (chunk: Buffer) => {
      const at = now();
      // Messages are small and sent whole; one chunk may hold several.
      const text = chunk.toString('latin1');
      for (let i = text.indexOf('\x0135=D\x01'); i !== -1; i = text.indexOf('\x0135=D\x01', i + 1)) orders.push(at);
      executorSide.write(chunk);
    });
    executorSide.on('data', (chunk: Buffer) => agentSide.write(chunk));
    const end = () => {
      agentSide.destroy();
      executorSide.destroy();
    };
    agentSide.on('close', end).on('error', end);
    executorSide.on('close', end).on('error', end);
  });
  await new Promise<void>((resolve) => relay.listen(port, '127.0.0.1', resolve));
  return {
    port,
    orders,
    close: () => {
      for (const socket of sockets) socket.destroy();
      relay.close();
    },
  };
}

async function fixIdle(store: VenueBenchStore, server: BenchServer): Promise<AlertToOrderRow> {
  const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-executor-'));
  const executor = await QuickFixExecutor.start(dir, FIX_COMP_ID);
  const relay = await stampingRelay(executor.port);
  const fleet = new AgentFleet();
  try {
    const [agent] = await provision(server, 'a2o-fix', 1);
    const config = path.join(dir, 'fix.json');
    writeFileSync(
      config,
      JSON.stringify({
        dialect: 'fix44',
        trade: {
          host: '127.0.0.1',
          port: relay.port,
          tls: false,
          senderCompId: FIX_COMP_ID,
          targetCompId: 'EXECUTOR',
          heartbeatSeconds: 30,
        },
        account: { currency: 'USD', balance: 10_000_000 },
        instruments: {
          EURUSD: {
            brokerSymbol: 'EURUSD',
            digits: 5,
            contractSize: 100000,
            lotMin: 0.01,
            lotStep: 0.01,
            lotMax: 50,
            quoteCurrency: 'USD',
          },
        },
      }),
    );
    await fleet.start(server, agent!.token, ['--venue', 'fix', '--fix-config', config], {
      SIGNALGATE_FIX_USERNAME: 'bench',
      SIGNALGATE_FIX_PASSWORD: 'bench',
    });
    const times: number[] = [];
    for (let i = 0; i < WARM_UP + IDLE_SIGNALS; i++) {
      const orders = relay.orders.length;
      const posted = await postSignal(server.url, agent!.authKey, 'EURUSD,buylimit,vol=0.01,entry_price=1.1');
      executed(await settledSignal(server, posted.id));
      const arrived = relay.orders[orders];
      if (arrived === undefined) throw new Error(`signal ${posted.id} reached the executor as no NewOrderSingle`);
      if (i >= WARM_UP) times.push(arrived - posted.startedAt);
    }
    return { store, path: 'fix idle', signals: times.length, ...spread(times) };
  } finally {
    await fleet.stopAll();
    relay.close();
    await executor.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function paperBurst(store: VenueBenchStore, server: BenchServer, together: boolean): Promise<AlertToOrderRow> {
  const fleet = new AgentFleet();
  const tokensDir = mkdtempSync(path.join(tmpdir(), 'signalgate-bench-tokens-'));
  let stopBusy: (() => void) | null = null;
  try {
    const agents = await provision(server, 'a2o-burst', BURST_AGENTS);
    const started = [];
    if (together) {
      const tokensFile = path.join(tokensDir, 'tokens');
      writeFileSync(tokensFile, agents.map((a) => `${a.token}\n`).join(''), { mode: 0o600 });
      started.push(
        await fleet.start(
          server,
          '',
          ['--paper', '--seed', '1', '--tokens-file', tokensFile],
          {},
          [...AGENTS_NODE_ARGS, ...PROFILED_AGENT_NODE_ARGS],
          agents.length,
        ),
      );
    } else {
      // Started ten at a time: fifty node processes starting at once on two cores take longer than ten by ten.
      for (let i = 0; i < agents.length; i += 10)
        started.push(
          ...(await Promise.all(
            agents
              .slice(i, i + 10)
              .map((a, j) =>
                fleet.start(server, a.token, ['--paper', '--seed', '1'], {}, [
                  ...AGENTS_NODE_ARGS,
                  ...(i + j === 0 ? PROFILED_AGENT_NODE_ARGS : []),
                ]),
              ),
          )),
        );
    }
    // Each agent's first signal warms it (the engine's and the store's first of each path).
    await Promise.all(
      agents.map(async (a) =>
        executed(
          await settledSignal(server, (await postSignal(server.url, a.authKey, 'EURUSD,buy,vol=0.01')).id, 120_000),
        ),
      ),
    );
    stopBusy = BURST_BUSY > 0 ? busyCores(BURST_BUSY) : null;
    for (let round = 1; round <= BURST_WARMUPS; round++) {
      await orderTimes(server, await burst(server, agents));
      process.stdout.write(`alert-to-order ${store} burst: warm-up ${round} of ${BURST_WARMUPS} done\n`);
    }
    const cpuBefore = burstCpu(server, fleet);
    const settled = await burst(server, agents);
    // Every signal settled: the work of each is in these figures, and none of reading their times.
    const cpuAfter = burstCpu(server, fleet);
    stopBusy?.();
    const times = await orderTimes(server, settled);
    // A profiled agent writes its profile when it exits by itself.
    if (PROFILED_AGENT_NODE_ARGS.length > 0) await fleet.stopGracefully(started[0]!);
    const per = (k: keyof typeof cpuAfter.own) => (cpuAfter.own[k] - cpuBefore.own[k]) / times.length;
    return {
      store,
      path: `paper burst (${BURST_AGENTS} agents${together ? ', one process' : ''}${BURST_BUSY > 0 ? `, cores ${BURST_BUSY}% busy` : ''})`,
      signals: times.length,
      ...spread(times),
      ...(BURST_BUSY > 0 ? { busy: BURST_BUSY } : {}),
      burstCpu: {
        server: per('server'),
        agents: per('agents'),
        database: cpuSince(cpuBefore.postgres, cpuAfter.postgres) / times.length,
        bench: per('bench'),
      },
    };
  } finally {
    stopBusy?.();
    await fleet.stopAll();
    rmSync(tokensDir, { recursive: true, force: true });
  }
}
