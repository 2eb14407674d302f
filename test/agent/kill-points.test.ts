import { readdirSync } from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type {
  BinanceUsdmExchange,
  FakeAlgoOrder,
  FakeOrder,
  FakeRequest,
  Moment,
} from '../fakes/binance-usdm-exchange.js';
import { BINANCE_USDM, useCcxtAgentBed, type CcxtAgent } from '../support/ccxt-agent-bed.js';
import type { AgentProcess } from './support/agent-process.js';
import { readJournal } from './support/journal-file.js';

/**
 * Kill points (issue 46): for each path a signal or a stop move takes on the venue (entry, stop,
 * target, stop move, close, cancel), a real agent process on the Binance USDⓈ-M test exchange is
 * SIGKILLed at each step of that path, at three moments, then started again; the exchange then
 * holds exactly what the signal asked, once, protected, and the agent's published book equals it.
 *
 * The moments are reached without timing guesses: the test owns the exchange in-process, and its
 * hook (`onMoment`) runs synchronously as the step's request passes, so the kill lands there:
 * - before sending: the request arrives, the agent is killed and the request dropped, never carried
 *   out (to the exchange and to the agent's disk this is the agent dying before it sent it);
 * - after sending, before the answer: carried out, the agent killed, the answer never sent;
 * - after the answer, before the journal: the answer handed to the socket, then the agent killed.
 *   The agent writes its journal only once the whole path is carried out, so each kill here
 *   lands before that write unless the agent read the answer, finished the path and synced its
 *   journal within the microseconds between the answer's write and the kill; each case checks
 *   the journal afterwards and fails, saying so, if the kill came after it.
 * From the kill to the restart every request is dropped: what the dead agent had in a socket's
 * buffer never counts.
 *
 * One account, exchange and data directory serve every case, in order: the agent started
 * again in one case is the one killed in the next (one process start per case), and each case
 * begins flat (its setup closes what the previous one left).
 */
const MOMENTS: { moment: Moment; name: string }[] = [
  { moment: 'arrived', name: 'before sending' },
  { moment: 'carried', name: 'after sending, before the answer' },
  { moment: 'answered', name: 'after the answer, before the journal' },
];

interface Held {
  positions: { symbol: string; amount: number; entryPrice: number }[];
  orders: FakeOrder[];
  openOrders: FakeOrder[];
  algoOrders: FakeAlgoOrder[];
  openAlgoOrders: FakeAlgoOrder[];
}

const ours = (suffix: string) => new RegExp(`^sg[0-9a-f]{16}${suffix}$`);
const posted = (endpoint: string, id: 'newClientOrderId' | 'clientAlgoId', suffix: string) => (r: FakeRequest) =>
  r.method === 'POST' && r.path === endpoint && ours(suffix).test(r.params[id] ?? '');
const deleted = (endpoint: string) => (r: FakeRequest) => r.method === 'DELETE' && r.path === endpoint;

type Path = 'entry' | 'stop' | 'target' | 'stop move' | 'close' | 'cancel';
const STEPS: { path: Path; step: string; match: (r: FakeRequest) => boolean }[] = [
  { path: 'entry', step: 'the market order', match: posted('/fapi/v1/order', 'newClientOrderId', 'o') },
  { path: 'stop', step: 'the stop order', match: posted('/fapi/v1/algoOrder', 'clientAlgoId', 'p\\d+r0s') },
  { path: 'target', step: 'the target order', match: posted('/fapi/v1/order', 'newClientOrderId', 'p\\d+r0t1') },
  { path: 'stop move', step: 'the new stop', match: posted('/fapi/v1/algoOrder', 'clientAlgoId', 'p\\d+r1s') },
  { path: 'stop move', step: "the old stop's cancel", match: deleted('/fapi/v1/algoOrder') },
  { path: 'close', step: 'the close order', match: posted('/fapi/v1/order', 'newClientOrderId', 'c1') },
  { path: 'close', step: "the stop's cancel", match: deleted('/fapi/v1/algoOrder') },
  { path: 'cancel', step: 'the cancel', match: deleted('/fapi/v1/order') },
];
const CASES = STEPS.flatMap((s) => MOMENTS.map((m) => ({ ...s, ...m })));
const PRICES: [string, number][] = [
  ['BTCUSDT', 50000],
  ['ETHUSDT', 3000],
];

describe('an agent killed at each step of each path, and started again', () => {
  const bed = useCcxtAgentBed(BINANCE_USDM, { lasting: true });
  let lineage: CcxtAgent;
  let agent: AgentProcess;
  let usdm: BinanceUsdmExchange;
  beforeAll(async () => {
    lineage = await bed.start('kill-points');
    agent = lineage.agent;
    usdm = bed.exchange;
  });
  const run = () => lineage.run();
  const dir = () => lineage.dir;
  const held = () => usdm.state() as unknown as Held;
  const published = () => lineage.published();
  const signal = (text: string) => postSignal(bed.server.url, lineage.authKey, text);
  const settled = (id: string) => bed.outcome(id);
  const journal = () => {
    const agentDir = path.join(dir(), 'agents', readdirSync(path.join(dir(), 'agents'))[0]!);
    const file = readdirSync(agentDir).find((f) => f.startsWith('venue-') && f.endsWith('.json'))!;
    return readJournal(path.join(agentDir, file));
  };
  /** Nothing at the exchange nor in the book: what the previous case left is closed, the prices back where they began. */
  const flat = async () => {
    for (const [symbol, price] of PRICES) {
      usdm.setPrice(symbol, price);
      if (held().positions.some((p) => p.symbol === symbol))
        expect((await settled(await signal(`${symbol},closelong`))).status).toBe('executed');
      if (held().openOrders.some((o) => o.symbol === symbol))
        expect((await settled(await signal(`${symbol},cancellong`))).status).toBe('executed');
    }
    await waitUntil(
      async () => {
        const state = await published();
        return state?.positions?.length === 0 && state.orders.length === 0 && held().openAlgoOrders.length === 0;
      },
      'a flat start',
      15_000,
    );
  };

  /** Waits for `condition`, failing with what the exchange and the agent's published state then show. */
  const until = async (condition: (state: any) => boolean, what: string) => {
    try {
      await waitUntil(async () => condition(await published()), what, 20_000);
    } catch (error) {
      const state = await published();
      throw new Error(
        `${(error as Error).message}\nexchange: ${JSON.stringify({ ...held(), orders: undefined })}\npublished: ${JSON.stringify({ positions: state?.positions, orders: state?.orders, notManaged: state?.notManaged })}\nlog: ${agent.stdout.slice(-3000)}`,
      );
    }
  };

  it.each(CASES)('$path, killed at $step $name', async ({ path: which, match, moment, name }) => {
    // A case that failed with its agent dead leaves the next one an agent all the same.
    if (agent.child.exitCode !== null || agent.child.signalCode !== null) agent = await run();
    await flat();
    // What the path acts on, set up before the kill is armed.
    let entry: string | null = null;
    if (which === 'stop move' || which === 'close' || which === 'cancel') {
      entry = await signal(
        which === 'cancel'
          ? 'BTCUSDT,buylimit,vol=0.01,entry_price=49500,sl_price=48000'
          : `BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=52000${which === 'stop move' ? ',be_trigger=500' : ''}`,
      );
      expect((await settled(entry)).status).toBe('executed');
      await waitUntil(
        async () => ((await published())?.positions?.length ?? 0) + ((await published())?.orders?.length ?? 0) === 1,
        'the setup published',
        15_000,
      );
    }
    const ticket: number | undefined = (await published()).positions[0]?.position;

    const killed = agent;
    let done = false;
    usdm.onMoment((request, now) => {
      if (done) return now === 'arrived' ? 'drop' : undefined;
      if (now !== moment || !match(request)) return undefined;
      done = true;
      process.kill(killed.child.pid!, 'SIGKILL');
      return moment === 'arrived' ? 'drop' : moment === 'carried' ? 'withhold' : undefined;
    });
    let acting: string | null = null;
    if (which === 'entry' || which === 'stop' || which === 'target')
      acting = await signal('BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000');
    else if (which === 'close') acting = await signal('BTCUSDT,closelong');
    else if (which === 'cancel') acting = await signal('BTCUSDT,cancellong');
    else usdm.setPrice('BTCUSDT', 50600); // breakeven reached: the agent moves the stop
    await killed.exited;
    expect(done, `the agent was killed ${name}`).toBe(true);
    // The kill came before the journal took the step's outcome.
    const stored = journal();
    if (acting !== null) expect(stored.inFlight, 'killed before the outcome was written').toContain(acting);
    else expect(stored.book.protection[String(ticket)].moving, 'killed before the finished move was written').toBe(1);
    usdm.onMoment(null);

    agent = await run();
    // A cancel carried out before the kill finds its order gone at the start's comparison: kept
    // aside for the signal in flight (`departedOrders`), the cancel executed again is executed.
    if (acting !== null) expect((await settled(acting)).status).toBe('executed');

    // The exchange holds what was asked, once; the book the agent publishes equals it.
    if (which === 'close' || which === 'cancel') {
      await until(
        (state) => state?.positions?.length === 0 && state.orders.length === 0 && state.notManaged.length === 0,
        'the book empty',
      );
      expect(held().positions).toEqual([]);
      expect(held().openOrders).toEqual([]);
      expect(held().openAlgoOrders).toEqual([]);
      if (which === 'close')
        expect(
          held().orders.filter((o) => o.clientOrderId === clientOrderId(acting!, 'c1') && o.executedQty > 0),
        ).toHaveLength(1);
      return;
    }
    const opening = clientOrderId(entry ?? acting!, 'o');
    const stop = which === 'stop move' ? 50000.1 : 49000;
    const target = which === 'stop move' ? 52000 : 51000;
    await until(
      (state) =>
        state?.positions?.length === 1 &&
        state.positions[0].sl === stop &&
        state.positions[0].stopMove === undefined &&
        state.positions[0].unprotected === undefined &&
        state.notManaged.length === 0 &&
        held().openAlgoOrders.length === 1,
      'the book and the venue settled',
    );
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.01 }]);
    expect(held().orders.filter((o) => o.clientOrderId === opening && o.executedQty > 0)).toHaveLength(1);
    expect(held().openAlgoOrders.map((o) => [o.side, o.triggerPrice, o.quantity, o.reduceOnly])).toEqual([
      ['SELL', stop, 0.01, true],
    ]);
    expect(held().openOrders.map((o) => [o.side, o.price, o.origQty, o.reduceOnly])).toEqual([
      ['SELL', target, 0.01, true],
    ]);
    const state = await published();
    expect(state.positions).toMatchObject([{ symbol: 'BTC/USDT:USDT', side: 'buy', volume: 0.01, sl: stop }]);
    expect(state.orders).toEqual([]);
  });

  // Several symbols in flight at the kill: BTCUSDT's entry carried out and its answer withheld
  // (its lane waits for it), ETHUSDT's entry in its own lane killed at its moment.
  it.each(MOMENTS.filter((m) => m.moment !== 'carried'))(
    "BTCUSDT's and ETHUSDT's entries in flight, killed at ETHUSDT's market order $name",
    async ({ moment, name }) => {
      if (agent.child.exitCode !== null || agent.child.signalCode !== null) agent = await run();
      await flat();
      const killed = agent;
      let btcHeld = false;
      let done = false;
      const entry = (symbol: string) => (r: FakeRequest) =>
        posted('/fapi/v1/order', 'newClientOrderId', 'o')(r) && r.params.symbol === symbol;
      usdm.onMoment((request, now) => {
        if (done) return now === 'arrived' ? 'drop' : undefined;
        if (now === 'carried' && entry('BTCUSDT')(request)) {
          btcHeld = true;
          return 'withhold';
        }
        if (now !== moment || !entry('ETHUSDT')(request)) return undefined;
        done = true;
        process.kill(killed.child.pid!, 'SIGKILL');
        return moment === 'arrived' ? 'drop' : undefined;
      });
      const btc = await signal('BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000');
      await waitUntil(() => btcHeld, "BTCUSDT's order carried out, its answer withheld", 20_000);
      const eth = await signal('ETHUSDT,buy,vol=0.01,sl_price=2900,tp_price=3100');
      await killed.exited;
      expect(done, `the agent was killed at ETHUSDT's order ${name}`).toBe(true);
      expect(journal().inFlight, 'killed before the outcomes were written').toEqual(expect.arrayContaining([btc, eth]));
      usdm.onMoment(null);

      agent = await run();
      expect((await settled(btc)).status).toBe('executed');
      expect((await settled(eth)).status).toBe('executed');
      await until(
        (state) =>
          state?.positions?.length === 2 &&
          state.positions.every((p: any) => p.sl !== null && p.unprotected === undefined) &&
          state.notManaged.length === 0 &&
          held().openAlgoOrders.length === 2,
        'both positions settled, at the venue and in the book',
      );
      // Each entry filled once; each position has one stop and one target of its lots.
      for (const id of [btc, eth])
        expect(
          held().orders.filter((o) => o.clientOrderId === clientOrderId(id, 'o') && o.executedQty > 0),
        ).toHaveLength(1);
      expect(
        held()
          .positions.map((p) => [p.symbol, p.amount])
          .sort(),
      ).toEqual([
        ['BTCUSDT', 0.01],
        ['ETHUSDT', 0.01],
      ]);
      const sorted = <T extends { symbol: string }>(list: T[]) =>
        [...list].sort((a, b) => a.symbol.localeCompare(b.symbol));
      expect(
        sorted(held().openAlgoOrders).map((o) => [o.symbol, o.side, o.triggerPrice, o.quantity, o.reduceOnly]),
      ).toEqual([
        ['BTCUSDT', 'SELL', 49000, 0.01, true],
        ['ETHUSDT', 'SELL', 2900, 0.01, true],
      ]);
      expect(sorted(held().openOrders).map((o) => [o.symbol, o.side, o.price, o.origQty, o.reduceOnly])).toEqual([
        ['BTCUSDT', 'SELL', 51000, 0.01, true],
        ['ETHUSDT', 'SELL', 3100, 0.01, true],
      ]);
      const state = await published();
      expect(
        [...state.positions]
          .sort((a: any, b: any) => a.symbol.localeCompare(b.symbol))
          .map((p: any) => [p.symbol, p.side, p.volume, p.sl]),
      ).toEqual([
        ['BTC/USDT:USDT', 'buy', 0.01, 49000],
        ['ETH/USDT:USDT', 'buy', 0.01, 2900],
      ]);
      expect(state.orders).toEqual([]);
    },
  );

  it('a stop placed before a kill and cancelled at the exchange while the agent was down is placed again under a new client id', async () => {
    if (agent.child.exitCode !== null || agent.child.signalCode !== null) agent = await run();
    await flat();
    const killed = agent;
    let done = false;
    usdm.onMoment((request, now) => {
      if (done) return now === 'arrived' ? 'drop' : undefined;
      if (now !== 'carried' || !posted('/fapi/v1/algoOrder', 'clientAlgoId', 'p\\d+r0s')(request)) return undefined;
      done = true;
      process.kill(killed.child.pid!, 'SIGKILL');
      return 'withhold';
    });
    const acting = await signal('BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000');
    await killed.exited;
    expect(done, 'the agent was killed after the stop was placed').toBe(true);
    usdm.onMoment(null);
    // By hand, at the exchange: the stop the agent placed (and never heard back about) is cancelled.
    usdm.cancelConditional('BTCUSDT');
    const first = held()
      .algoOrders.filter((o) => o.algoStatus === 'CANCELED')
      .at(-1)!;
    expect(first.clientAlgoId).toMatch(ours('p\\d+r0s'));

    agent = await run();
    expect((await settled(acting)).status).toBe('executed');
    // Found cancelled by its client id, the stop is not taken as placed: it stands again, once.
    await until(
      (state) =>
        state?.positions?.length === 1 &&
        state.positions[0].sl === 49000 &&
        state.notManaged.length === 0 &&
        held().openAlgoOrders.length === 1,
      'the stop placed again',
    );
    expect(held().openAlgoOrders.map((o) => [o.clientAlgoId, o.side, o.triggerPrice, o.quantity])).toEqual([
      [`${first.clientAlgoId}x1`, 'SELL', 49000, 0.01],
    ]);
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.01 }]);
  });
});
