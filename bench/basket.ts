import { BASKET_SYMBOLS, BinanceUsdmExchange } from '../test/fakes/binance-usdm-exchange.js';
import type { BenchServer } from './bench-server.js';
import { loadAverage } from './load-average.js';
import { cpuMillis } from './process-cpu.js';
import { AgentFleet, executed, now, postSignal, provision, serverOn, settledSignal } from './venue-bench.js';

const PAPER_SYMBOLS = [
  'EURUSD',
  'GBPUSD',
  'USDJPY',
  'USDCHF',
  'USDCAD',
  'AUDUSD',
  'NZDUSD',
  'EURGBP',
  'EURJPY',
  'GBPJPY',
  'EURCHF',
  'AUDJPY',
  'XAUUSD',
  'XAGUSD',
  'US30',
  'US500',
  'NAS100',
  'GER40',
  'UK100',
  'JP225',
];
const CCXT_KEYS = { SIGNALGATE_CCXT_API_KEY: 'bench-key', SIGNALGATE_CCXT_SECRET: 'bench-secret' };
/** Node flags for the CCXT agent (BENCH_CCXT_AGENT_NODE_ARGS, space-separated), e.g. `--cpu-prof --cpu-prof-dir=/tmp/p`. */
const CCXT_AGENT_NODE_ARGS = (process.env.BENCH_CCXT_AGENT_NODE_ARGS ?? '').split(' ').filter((arg) => arg !== '');
/** Baskets posted to the CCXT agent (BENCH_BASKET_CCXT_ROUNDS): more rounds, a steadier CPU figure. */
const CCXT_ROUNDS = Number(process.env.BENCH_BASKET_CCXT_ROUNDS ?? 1);
const SUSTAINED_SIGNALS = Number(process.env.BENCH_BASKET_SUSTAINED ?? 2000);
/** Posts in flight at once while measuring the sustained rate: enough to keep the agent's queue from running dry. */
const SUSTAINED_IN_FLIGHT = 32;

export interface BasketRow {
  venue: 'paper' | 'ccxt';
  /** From the first POST's start to each order at the venue, in order (ms). */
  orders: number[];
  acks: number[];
  lastOrder: number;
  lastAck: number;
  /** The agent's process CPU from the first POST to the last outcome, per signal (ms). */
  cpuPerSignal: number;
}

/**
 * `npm run bench -- --basket`: a basket of 20 symbols posted at once (20 POSTs started
 * together) to one agent, on the paper venue and on CCXT against the Binance USDⓈ-M test
 * exchange, SQLite store. From the first POST's start to each order at the venue (paper: the
 * agent's `sentAt`; CCXT: the exchange's request log) and to each acknowledgement (the server's
 * `ackedAt`). Then the paper agent's sustained rate: SUSTAINED_SIGNALS signals (a buy and its
 * close, alternately, each pair on the next of the basket's symbols) posted SUSTAINED_IN_FLIGHT at a time, executed per second from the first
 * POST to the last acknowledgement, and how many expired.
 */
export async function runBasket(): Promise<{ rows: BasketRow[]; sustainedRate: number; expired: number }> {
  const server = await serverOn('sqlite', null);
  const fleet = new AgentFleet();
  let exchange: BinanceUsdmExchange | null = null;
  try {
    const [paper, ccxt, sustained] = await provision(server, 'basket', 3);
    const rows: BasketRow[] = [];
    const paperAgent = await fleet.start(server, paper!.token, ['--paper', '--seed', '1']);
    rows.push(await basket(server, paper!.authKey, 'paper', PAPER_SYMBOLS, null, paperAgent.child.pid!, 0));

    exchange = await BinanceUsdmExchange.start({
      apiKey: CCXT_KEYS.SIGNALGATE_CCXT_API_KEY,
      secret: CCXT_KEYS.SIGNALGATE_CCXT_SECRET,
      wallet: 10_000_000,
      symbols: BASKET_SYMBOLS,
    });
    const ccxtAgent = await fleet.start(
      server,
      ccxt!.token,
      ['--venue', 'ccxt', '--exchange', 'binanceusdm', '--proxy-url', exchange.url],
      CCXT_KEYS,
      CCXT_AGENT_NODE_ARGS,
    );
    for (let round = 0; round < CCXT_ROUNDS; round++) {
      rows.push(
        await basket(
          server,
          ccxt!.authKey,
          'ccxt',
          BASKET_SYMBOLS.map((s) => s.symbol),
          exchange,
          ccxtAgent.child.pid!,
          round,
        ),
      );
    }
    // A profiled agent writes its profile when it exits by itself.
    if (CCXT_AGENT_NODE_ARGS.length > 0) await fleet.stopGracefully(ccxtAgent);

    const agent = await fleet.start(server, sustained!.token, ['--paper', '--seed', '1']);
    const { rate, expired, cpu } = await sustainedRate(server, sustained!.authKey, agent.child.pid!);
    process.stdout.write(
      `\nbasket: 20 symbols posted at once to one agent, SQLite, node ${process.version}; ms from the first POST's start\n\n` +
        `| venue | 1st order | 5th | 10th | 15th | 20th (last) order | 1st ack | last ack | agent CPU per signal |\n|---|---|---|---|---|---|---|---|---|\n` +
        rows
          .map(
            (r) =>
              `| ${r.venue} | ${[0, 4, 9, 14, 19].map((i) => r.orders[i]!.toFixed(0)).join(' | ')} | ${r.acks[0]!.toFixed(0)} | ${r.lastAck.toFixed(0)} | ${r.cpuPerSignal.toFixed(2)} ms |`,
          )
          .join('\n') +
        `\n\npaper agent, sustained: ${SUSTAINED_SIGNALS} signals (buy, then its close, across ${PAPER_SYMBOLS.length} symbols) ${SUSTAINED_IN_FLIGHT} in flight: ` +
        `${rate.toFixed(0)} signals/s executed, ${expired} expired; CPU per signal (process CPU over the signals, ` +
        `the figure a loaded machine disturbs least): agent ${cpu.agent.toFixed(2)} ms, server ${cpu.server.toFixed(2)} ms\n` +
        `load average at the end: ${loadAverage()}\n`,
    );
    return { rows, sustainedRate: rate, expired };
  } finally {
    await fleet.stopAll();
    await exchange?.stop();
    await server.stop();
  }
}

async function basket(
  server: BenchServer,
  authKey: string,
  venue: 'paper' | 'ccxt',
  symbols: string[],
  exchange: BinanceUsdmExchange | null,
  agentPid: number,
  round: number,
): Promise<BasketRow> {
  // One signal first: the agent's first signal pays for what is loaded once.
  const warm = venue === 'paper' ? 'EURUSD,buy,vol=0.01' : `${symbols[0]},buy,vol=0.1`;
  if (round === 0) executed(await settledSignal(server, (await postSignal(server.url, authKey, warm)).id, 180_000));
  const ordersBefore = exchange?.requests('POST', '/fapi/v1/order').length ?? 0;
  const cpuBefore = cpuMillis(agentPid);
  const posted = await Promise.all(
    symbols.map((symbol) => postSignal(server.url, authKey, `${symbol},buy,vol=${venue === 'paper' ? 0.01 : 0.1}`)),
  );
  const first = Math.min(...posted.map((p) => p.startedAt));
  const signals = await Promise.all(posted.map((p) => settledSignal(server, p.id, 180_000)));
  const cpuPerSignal = (cpuMillis(agentPid) - cpuBefore) / symbols.length;
  const deliveries = signals.map(executed);
  // BENCH_BASKET_TRACE=1: the exchange's requests from the first POST on, to see what stands before each order.
  if (exchange !== null && process.env.BENCH_BASKET_TRACE === '1') {
    const received = (exchange as unknown as { received: { method: string; path: string; at: number }[] }).received;
    process.stderr.write(
      `basket round ${round}: ` +
        received
          .filter((r) => r.at >= first)
          .map((r) => `+${(r.at - first).toFixed(0)} ${r.method} ${r.path.replace(/^\/fapi\//, '')}`)
          .join(', ') +
        '\n',
    );
    const at = (iso: string | null | undefined) => (iso ? (Date.parse(iso) - first).toFixed(0) : '-');
    process.stderr.write(
      `basket round ${round} signals (delivered/decided/sent/acked): ` +
        deliveries
          .map((d) => `${at(d.deliveredAt)}/${at(d.timings?.decidedAt)}/${at(d.timings?.sentAt)}/${at(d.ackedAt)}`)
          .join(' ') +
        '\n',
    );
  }
  const acks = deliveries.map((d) => Date.parse(d.ackedAt!) - first).sort((a, b) => a - b);
  const orders =
    exchange === null
      ? deliveries.map((d) => Date.parse(d.timings!.sentAt!) - first)
      : exchange
          .requests('POST', '/fapi/v1/order')
          .slice(ordersBefore)
          .map((r) => r.at - first);
  if (orders.length !== symbols.length)
    throw new Error(`the basket's ${symbols.length} signals made ${orders.length} orders at the venue`);
  orders.sort((a, b) => a - b);
  return { venue, orders, acks, lastOrder: orders[orders.length - 1]!, lastAck: acks[acks.length - 1]!, cpuPerSignal };
}

async function sustainedRate(
  server: BenchServer,
  authKey: string,
  agentPid: number,
): Promise<{ rate: number; expired: number; cpu: { agent: number; server: number } }> {
  executed(await settledSignal(server, (await postSignal(server.url, authKey, 'EURUSD,buy,vol=0.01')).id, 60_000));
  executed(await settledSignal(server, (await postSignal(server.url, authKey, 'EURUSD,closebuy')).id, 60_000));
  const ids: string[] = [];
  const cpuBefore = { agent: cpuMillis(agentPid), server: cpuMillis(server.pid) };
  const start = now();
  let next = 0;
  const sender = async () => {
    while (next < SUSTAINED_SIGNALS) {
      const i = next++;
      // Across the basket's symbols: each buy and its close on one symbol, the next pair on the next.
      const symbol = PAPER_SYMBOLS[Math.floor(i / 2) % PAPER_SYMBOLS.length]!;
      ids[i] = (
        await postSignal(server.url, authKey, i % 2 === 0 ? `${symbol},buy,vol=0.01` : `${symbol},closebuy`)
      ).id;
    }
  };
  await Promise.all(Array.from({ length: SUSTAINED_IN_FLIGHT }, sender));
  // Taken once the last signal is settled, before every signal is read back (the reads cost the server too).
  await settledSignal(server, ids[ids.length - 1]!, 180_000);
  const cpu = {
    agent: (cpuMillis(agentPid) - cpuBefore.agent) / ids.length,
    server: (cpuMillis(server.pid) - cpuBefore.server) / ids.length,
  };
  let lastAck = 0;
  let expired = 0;
  for (const id of ids) {
    const signal = await settledSignal(server, id, 180_000);
    const delivery = signal.deliveries[0]!;
    // A close that overtook its buy (32 in flight) is refused by the engine: handled all the same.
    if (delivery.status === 'expired') expired += 1;
    else if (delivery.status === 'failed') executed(signal);
    if (delivery.ackedAt) lastAck = Math.max(lastAck, Date.parse(delivery.ackedAt));
  }
  return { rate: (1000 * (ids.length - expired)) / (lastAck - start), expired, cpu };
}
