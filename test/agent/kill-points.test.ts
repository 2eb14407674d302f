import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import {
  BinanceUsdmExchange,
  type FakeAlgoOrder,
  type FakeOrder,
  type FakeRequest,
  type Moment,
} from '../fakes/binance-usdm-exchange.js';
import { AgentProcess } from './support/agent-process.js';

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
 */
const KEYS = { SIGNALGATE_CCXT_API_KEY: 'usdm-key', SIGNALGATE_CCXT_SECRET: 'usdm-secret' };
const MOMENTS: { moment: Moment; name: string }[] = [
  { moment: 'arrived', name: 'before sending' },
  { moment: 'carried', name: 'after sending, before the answer' },
  { moment: 'answered', name: 'after the answer, before the journal' },
];

interface Held {
  positions: { symbol: string; amount: number; entryPrice: number }[];
  orders: FakeOrder[];
  openOrders: FakeOrder[];
  openAlgoOrders: FakeAlgoOrder[];
}

const ours = (suffix: string) => new RegExp(`^sg[0-9a-f]{16}${suffix}$`);
const posted = (endpoint: string, id: 'newClientOrderId' | 'clientAlgoId', suffix: string) => (r: FakeRequest) =>
  r.method === 'POST' && r.path === endpoint && ours(suffix).test(r.params[id] ?? '');
const deleted = (endpoint: string) => (r: FakeRequest) => r.method === 'DELETE' && r.path === endpoint;

type Path = 'entry' | 'stop' | 'target' | 'stop move' | 'close' | 'cancel';
const STEPS: { path: Path; step: string; match: (r: FakeRequest) => boolean }[] = [
  { path: 'entry', step: 'the market order', match: posted('/fapi/v1/order', 'newClientOrderId', 'o') },
  { path: 'stop', step: 'the stop order', match: posted('/fapi/v1/algoOrder', 'clientAlgoId', 'p1r0s') },
  { path: 'target', step: 'the target order', match: posted('/fapi/v1/order', 'newClientOrderId', 'p1r0t1') },
  { path: 'stop move', step: 'the new stop', match: posted('/fapi/v1/algoOrder', 'clientAlgoId', 'p1r1s') },
  { path: 'stop move', step: "the old stop's cancel", match: deleted('/fapi/v1/algoOrder') },
  { path: 'close', step: 'the close order', match: posted('/fapi/v1/order', 'newClientOrderId', 'c1') },
  { path: 'close', step: "the stop's cancel", match: deleted('/fapi/v1/algoOrder') },
  { path: 'cancel', step: 'the cancel', match: deleted('/fapi/v1/order') },
];
const CASES = STEPS.flatMap((s) => MOMENTS.map((m) => ({ ...s, ...m })));

describe('an agent killed at each step of each path, and started again', () => {
  let server: TestServer;
  let exchange: BinanceUsdmExchange | null = null;
  let dir = '';
  const agents: AgentProcess[] = [];
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.kill();
    await exchange?.stop();
    exchange = null;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  it.each(CASES)('$path, killed at $step $name', async ({ path: which, match, moment, name }) => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, [`kill-${which}-${moment}`.replace(/ /g, '-')]);
    const source = await sourceFor(server, accountId);
    const usdm = await BinanceUsdmExchange.start({
      apiKey: KEYS.SIGNALGATE_CCXT_API_KEY,
      secret: KEYS.SIGNALGATE_CCXT_SECRET,
    });
    exchange = usdm;
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-kill-'));
    const run = async () => {
      const agent = AgentProcess.startVenue(
        server.url,
        testAgent!.token,
        dir,
        ['--venue', 'ccxt', '--exchange', 'binanceusdm', '--proxy-url', usdm.url],
        KEYS,
      );
      agents.push(agent);
      await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready');
      return agent;
    };
    const held = () => usdm.state() as unknown as Held;
    const published = async () => (await server.admin('GET', `/api/admin/agents/${testAgent!.id}`)).body.state;
    const settled = async (signal: string) => {
      await waitUntil(
        async () => ['executed', 'rejected', 'failed'].includes((await deliveriesOf(server, signal))[0].status),
        `the outcome of ${signal}`,
        30_000,
      );
      return (await deliveriesOf(server, signal))[0];
    };
    const journal = () => {
      const agentDir = path.join(dir, 'agents', readdirSync(path.join(dir, 'agents'))[0]!);
      const file = readdirSync(agentDir).find((f) => f.startsWith('venue-') && f.endsWith('.json'))!;
      return JSON.parse(readFileSync(path.join(agentDir, file), 'utf8'));
    };

    const first = await run();
    // What the path acts on, set up before the kill is armed.
    let entry: string | null = null;
    if (which !== 'entry' && which !== 'stop' && which !== 'target') {
      const text =
        which === 'cancel'
          ? 'BTCUSDT,buylimit,vol=0.01,entry_price=49500,sl_price=48000'
          : `BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=52000${which === 'stop move' ? ',be_trigger=500' : ''}`;
      entry = await postSignal(server.url, source.authKey, text);
      expect((await settled(entry)).status).toBe('executed');
    }

    let killed = false;
    usdm.onMoment((request, now) => {
      if (killed) return now === 'arrived' ? 'drop' : undefined;
      if (now !== moment || !match(request)) return undefined;
      killed = true;
      process.kill(first.child.pid!, 'SIGKILL');
      return moment === 'arrived' ? 'drop' : moment === 'carried' ? 'withhold' : undefined;
    });
    let acting: string | null = null;
    if (which === 'entry' || which === 'stop' || which === 'target')
      acting = await postSignal(server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000');
    else if (which === 'close') acting = await postSignal(server.url, source.authKey, 'BTCUSDT,closelong');
    else if (which === 'cancel') acting = await postSignal(server.url, source.authKey, 'BTCUSDT,cancellong');
    else usdm.setPrice('BTCUSDT', 50600); // breakeven reached: the agent moves the stop
    await first.exited;
    expect(killed, `the agent was killed ${name}`).toBe(true);
    // The kill came before the journal took the step's outcome.
    const stored = journal();
    if (acting !== null) expect(stored.inFlight, 'killed before the outcome was written').toContain(acting);
    else expect(stored.book.protection['1'].moving, 'killed before the finished move was written').toBe(1);
    usdm.onMoment(null);

    await run();
    if (acting !== null) expect((await settled(acting)).status).toBe('executed');

    // The exchange holds what was asked, once; the book the agent publishes equals it.
    const entryOrders = () => held().orders.filter((o) => !o.reduceOnly && o.executedQty > 0);
    if (which === 'close' || which === 'cancel') {
      await waitUntil(
        async () => {
          const state = await published();
          return state?.positions?.length === 0 && state.orders.length === 0;
        },
        'the book empty',
        15_000,
      );
      expect(held().positions).toEqual([]);
      expect(held().openOrders).toEqual([]);
      expect(held().openAlgoOrders).toEqual([]);
      expect(held().orders.filter((o) => o.reduceOnly && o.executedQty > 0)).toHaveLength(which === 'close' ? 1 : 0);
      expect((await published()).notManaged).toEqual([]);
      return;
    }
    const stop = which === 'stop move' ? 50000.1 : 49000;
    const target = which === 'stop move' ? 52000 : 51000;
    await waitUntil(
      async () => {
        const state = await published();
        return (
          state?.positions?.length === 1 &&
          state.positions[0].sl === stop &&
          state.positions[0].stopMove === undefined &&
          state.positions[0].unprotected === undefined &&
          held().openAlgoOrders.length === 1
        );
      },
      'the book and the venue settled',
      15_000,
    );
    expect(held().positions).toMatchObject([{ symbol: 'BTCUSDT', amount: 0.01 }]);
    expect(entryOrders()).toHaveLength(1);
    expect(held().openAlgoOrders.map((o) => [o.side, o.triggerPrice, o.quantity, o.reduceOnly])).toEqual([
      ['SELL', stop, 0.01, true],
    ]);
    expect(held().openOrders.map((o) => [o.side, o.price, o.origQty, o.reduceOnly])).toEqual([
      ['SELL', target, 0.01, true],
    ]);
    const state = await published();
    expect(state.positions).toMatchObject([{ symbol: 'BTC/USDT:USDT', side: 'buy', volume: 0.01, sl: stop }]);
    expect(state.orders).toEqual([]);
    expect(state.notManaged).toEqual([]);
  });
});
