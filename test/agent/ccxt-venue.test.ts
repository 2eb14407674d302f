import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ccxt } from '../../src/agent/venues/ccxt/ccxt-library.js';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { RemoteVenueAgent } from '../../src/agent/remote-venue-agent.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { fixture, paramsOf, recordedVenue, responseRecord, type SentRequest } from '../venues/support/ccxt-records.js';

/**
 * The whole path on recorded exchange traffic: a signal posted to the server reaches the agent,
 * the engine decides, the CCXT venue (Binance USDⓈ-M) sends the order, and CCXT's transport
 * answers from CCXT's recorded Binance responses. The signal log shows the outcome with the
 * exchange's order id; an exchange refusal shows the exchange's message; while the exchange is
 * unreachable the signal stays unacknowledged and the agent says it is disconnected.
 */
const RESPONSES = 'binance-responses.json';

describe('an agent on Binance through CCXT, answered from recorded traffic', () => {
  let server: TestServer;
  const dirs: string[] = [];
  const agents: { agent: RemoteVenueAgent; running: Promise<void> }[] = [];
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    for (const { agent, running } of agents.splice(0)) {
      await agent.stop();
      await running.catch(() => undefined);
    }
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** The recorded exchange: each path answers its recorded response; `down` makes it unreachable; `refuse` refuses orders. */
  function recordedExchange() {
    const control = {
      down: false,
      refuse: null as Error | null,
      loseAnswers: 0,
      placed: null as unknown,
      openOrders: [responseRecord(RESPONSES, 'fetchOpenOrder', 'swap open order')] as unknown[],
      /** The best bid and ask the order book answers instead of the recorded ones. */
      top: null as { bid: string; ask: string } | null,
      /** The exchange has filled the first order placed at this average price (looking it up says FILLED; later ones rest). */
      filledAt: null as string | null,
      placements: 0,
    };
    const orderBook = () => {
      const recorded = responseRecord(RESPONSES, 'fetchOrderBook', 'swap orderbook') as {
        bids: string[][];
        asks: string[][];
      };
      return control.top === null
        ? recorded
        : { ...recorded, bids: [[control.top.bid, '1.000']], asks: [[control.top.ask, '1.000']] };
    };
    const routes: Record<string, () => unknown> = {
      'GET /fapi/v1/depth': orderBook,
      'GET /fapi/v2/balance': () => responseRecord(RESPONSES, 'fetchBalance', 'Linear swap balance'),
      'GET /fapi/v2/account': () => responseRecord(RESPONSES, 'fetchBalance', 'Linear swap balance'),
      'GET /fapi/v3/account': () => responseRecord(RESPONSES, 'fetchBalance', 'Linear swap balance'),
      'GET /fapi/v2/positionRisk': () =>
        responseRecord(RESPONSES, 'fetchPositions', 'Fetch linear positions without symbols'),
      'GET /fapi/v3/positionRisk': () =>
        responseRecord(RESPONSES, 'fetchPositions', 'Fetch linear positions without symbols'),
      'GET /fapi/v1/openOrders': () => control.openOrders,
      // Conditional orders, which Binance lists apart: none.
      'GET /fapi/v1/openAlgoOrders': () => [],
      'POST /fapi/v1/order': () => {
        if (control.refuse) throw control.refuse;
        control.placed = (responseRecord(RESPONSES, 'createOrders', 'create swap orders') as unknown[])[0];
        control.placements += 1;
        if (control.loseAnswers > 0) {
          // The exchange took the order, but its answer never arrived.
          control.loseAnswers -= 1;
          throw new ccxt.RequestTimeout(
            'binance POST https://fapi.binance.com/fapi/v1/order request timed out (10000 ms)',
          );
        }
        return control.placed;
      },
      // Looking an order up by client id: the one placed, or Binance's "Order does not exist.".
      'GET /fapi/v1/order': () => {
        if (control.placed === null)
          throw new ccxt.OrderNotFound('binance {"code":-2013,"msg":"Order does not exist."}');
        if (control.filledAt === null || control.placements > 1) return control.placed;
        const placed = control.placed as { origQty: string };
        return {
          ...placed,
          status: 'FILLED',
          executedQty: placed.origQty,
          cumQty: placed.origQty,
          avgPrice: control.filledAt,
        };
      },
    };
    const answer = (request: SentRequest) => {
      if (control.down)
        throw new ccxt.RequestTimeout(`binance ${request.method} ${request.url} request timed out (10000 ms)`);
      const route = routes[`${request.method} ${new URL(request.url).pathname}`];
      if (!route)
        throw new ccxt.BadRequest(`no recorded answer for ${request.method} ${new URL(request.url).pathname}`);
      return route();
    };
    return { control, answer };
  }

  async function startAgent(
    token: string,
    answer: (request: SentRequest) => unknown,
    options: { dir?: string; dryRun?: boolean; symbolMap?: Record<string, string>; manageEveryMs?: number } = {},
  ) {
    const dir = options.dir ?? mkdtempSync(path.join(tmpdir(), 'signalgate-ccxt-'));
    if (!dirs.includes(dir)) dirs.push(dir);
    const { venue, sent } = recordedVenue(
      {
        exchange: 'binance',
        market: 'swap',
        markets: fixture('binance-markets.json'),
        exchangeOptions: { leverageBrackets: {} },
      },
      answer,
    );
    const agent = new RemoteVenueAgent({
      server: server.url,
      token,
      transport: 'auto',
      dataDir: dir,
      venue,
      dryRun: options.dryRun ?? false,
      symbolMap: options.symbolMap ?? {},
      pipSizes: {},
      defaultVolumeLots: null,
      manageEveryMs: options.manageEveryMs ?? 60_000,
      log: pino({ level: 'silent' }),
    });
    const running = agent.run();
    running.catch(() => undefined);
    agents.push({ agent, running });
    return { agent, sent, running, dir };
  }

  it('places the sell limit, and the signal log shows the exchange order id; a refusal shows the exchange message', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance']);
    const source = await sourceFor(server, accountId);
    const exchange = recordedExchange();
    const { sent } = await startAgent(testAgent!.token, exchange.answer);

    const placed = await postSignal(server.url, source.authKey, 'BTCUSDT,selllimit,vol=0.2,entry_price=110001');
    await waitUntil(
      async () => (await deliveriesOf(server, placed))[0].status === 'executed',
      'the ack of the sell limit',
    );
    const delivery = (await deliveriesOf(server, placed))[0];
    expect(delivery.message).toBe('placed sell limit 0.2 BTC/USDT:USDT at 110001 (order 1)');
    expect(delivery.result.orders).toMatchObject([
      {
        id: '4087922044',
        symbol: 'BTC/USDT:USDT',
        side: 'sell',
        kind: 'limit',
        volume: 0.2,
        price: 110001,
        status: 'open',
        filled: 0,
      },
    ]);
    // What went to the exchange: the recorded order's parameters, with the signal's client order id.
    const order = sent.find((r) => r.method === 'POST' && new URL(r.url).pathname === '/fapi/v1/order')!;
    expect(paramsOf(order.url, order.body, 'urlencoded')).toMatchObject({
      symbol: 'BTCUSDT',
      side: 'SELL',
      type: 'LIMIT',
      quantity: '0.2',
      price: '110001',
      timeInForce: 'GTC',
      newClientOrderId: clientOrderId(placed, 'o'),
    });

    exchange.control.refuse = new ccxt.InsufficientFunds('binance {"code":-2019,"msg":"Margin is insufficient."}');
    const refused = await postSignal(server.url, source.authKey, 'BTCUSDT,selllimit,vol=0.5,entry_price=120000');
    await waitUntil(
      async () => (await deliveriesOf(server, refused))[0].status === 'rejected',
      'the ack of the refused order',
    );
    expect((await deliveriesOf(server, refused))[0].message).toBe(
      'ccxt:binance refused the sell limit order of 0.5 BTC/USDT:USDT at 120000: binance {"code":-2019,"msg":"Margin is insufficient."}',
    );
  });

  it('while the exchange is unreachable the signal is not acknowledged and the state says disconnected; once it answers, the signal executes', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance-2']);
    const source = await sourceFor(server, accountId);
    const exchange = recordedExchange();
    await startAgent(testAgent!.token, exchange.answer);
    await waitUntil(
      async () => (await server.admin('GET', `/api/admin/agents/${testAgent!.id}`)).body.state?.connected === true,
      'the agent connected',
    );

    exchange.control.down = true;
    const signal = await postSignal(server.url, source.authKey, 'BTCUSDT,selllimit,vol=0.2,entry_price=110001');
    await waitUntil(
      async () => (await server.admin('GET', `/api/admin/agents/${testAgent!.id}`)).body.state?.connected === false,
      'the state saying disconnected',
    );
    const view = (await server.admin('GET', `/api/admin/agents/${testAgent!.id}`)).body;
    expect(view.state.disconnectedBecause).toContain('request timed out');
    // Handed to the agent (the state may say disconnected first, from reading the balance), and not acknowledged.
    await waitUntil(
      async () => (await deliveriesOf(server, signal))[0].status === 'delivered',
      'the signal handed to the agent',
    );
    expect(exchange.control.placed).toBeNull();

    exchange.control.down = false;
    await waitUntil(
      async () => (await deliveriesOf(server, signal))[0].status === 'executed',
      'the ack once the exchange answers',
      30_000,
    );
    expect((await deliveriesOf(server, signal))[0].result.orders[0].id).toBe('4087922044');
  });

  it('an order whose answer was lost is looked up by its client id when the signal is retried, not placed twice', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance-3']);
    const source = await sourceFor(server, accountId);
    const exchange = recordedExchange();
    exchange.control.loseAnswers = 1;
    const { sent } = await startAgent(testAgent!.token, exchange.answer);
    const signal = await postSignal(server.url, source.authKey, 'BTCUSDT,selllimit,vol=0.2,entry_price=110001');
    await waitUntil(
      async () => (await deliveriesOf(server, signal))[0].status === 'executed',
      'the ack after the retry',
      30_000,
    );
    expect((await deliveriesOf(server, signal))[0].result.orders[0].id).toBe('4087922044');
    const orders = sent.filter((r) => new URL(r.url).pathname === '/fapi/v1/order');
    expect(orders.map((r) => r.method)).toEqual(['POST', 'GET']);
    expect(paramsOf(orders[1]!.url, orders[1]!.body, 'urlencoded')).toMatchObject({
      symbol: 'BTCUSDT',
      origClientOrderId: clientOrderId(signal, 'o'),
    });
  });

  it('--dry-run reads the exchange and acknowledges what it would do, sending no order', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance-dry']);
    const source = await sourceFor(server, accountId);
    const exchange = recordedExchange();
    const { sent } = await startAgent(testAgent!.token, exchange.answer, { dryRun: true });
    const signal = await postSignal(server.url, source.authKey, 'BTCUSDT,selllimit,vol=0.2,entry_price=110001');
    await waitUntil(async () => (await deliveriesOf(server, signal))[0].status === 'executed', 'the dry-run ack');
    const delivery = (await deliveriesOf(server, signal))[0];
    expect(delivery.message).toBe('dry run, nothing sent: placed sell limit 0.2 BTC/USDT:USDT at 110001 (order 1)');
    expect(delivery.result).toMatchObject({
      dryRun: true,
      orders: [{ id: `dry-run-${clientOrderId(signal, 'o')}`, status: 'open' }],
    });
    expect(sent.filter((r) => r.method !== 'GET')).toEqual([]);
  });

  it('a book crossing the sell limit leaves it pending: it becomes a position, with its target, when the exchange says it filled', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance-entry-fill']);
    const source = await sourceFor(server, accountId);
    const exchange = recordedExchange();
    const { sent } = await startAgent(testAgent!.token, exchange.answer, { manageEveryMs: 200 });
    const state = async () => (await server.admin('GET', `/api/admin/agents/${testAgent!.id}`)).body.state;
    const signal = await postSignal(
      server.url,
      source.authKey,
      'BTCUSDT,selllimit,vol=0.2,entry_price=110001,tp_price=105000',
    );
    await waitUntil(
      async () => (await deliveriesOf(server, signal))[0].status === 'executed',
      'the ack of the sell limit',
    );
    await waitUntil(async () => (await state())?.orders?.length === 1, 'the pending order in the published state');
    const lookups = () => sent.filter((r) => r.method === 'GET' && new URL(r.url).pathname === '/fapi/v1/order').length;
    const placements = () => sent.filter((r) => r.method === 'POST' && new URL(r.url).pathname === '/fapi/v1/order');

    // The book's bid is past the entry, but the exchange has not filled the order (yet).
    exchange.control.top = { bid: '110050.00', ask: '110060.00' };
    const seen = lookups();
    await waitUntil(() => lookups() >= seen + 3, 'management passes asking the exchange after the order');
    expect((await state()).orders).toMatchObject([{ side: 'sell', kind: 'limit', price: 110001 }]);
    expect((await state()).positions).toEqual([]);
    expect(placements()).toHaveLength(1);

    // The exchange fills it: the position is the exchange's fill, and its target goes out reduce-only.
    exchange.control.filledAt = '110003.50';
    await waitUntil(
      async () => ((s) => s?.positions?.length === 1 && s?.orders?.length === 0)(await state()),
      'the filled order as a position in the published state',
    );
    expect((await state()).positions[0]).toMatchObject({ side: 'sell', volume: 0.2, price: 110003.5 });
    await waitUntil(() => placements().length === 2, 'the target placed');
    expect(paramsOf(placements()[1]!.url, placements()[1]!.body, 'urlencoded')).toMatchObject({
      symbol: 'BTCUSDT',
      side: 'BUY',
      type: 'LIMIT',
      quantity: '0.2',
      price: '105000',
      reduceOnly: 'true',
    });
    // Reported once: later passes (which follow the resting target) leave the one position as it is.
    const passes = sent.filter((r) => r.method === 'GET' && new URL(r.url).pathname === '/fapi/v1/depth').length;
    await waitUntil(
      () => sent.filter((r) => r.method === 'GET' && new URL(r.url).pathname === '/fapi/v1/depth').length >= passes + 3,
      'more management passes',
    );
    expect((await state()).positions).toMatchObject([{ side: 'sell', volume: 0.2, price: 110003.5 }]);
    expect(placements()).toHaveLength(2);
  });

  it('on restart, a pending order the exchange no longer has leaves the book', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance-restart']);
    const source = await sourceFor(server, accountId);
    const exchange = recordedExchange();
    const first = await startAgent(testAgent!.token, exchange.answer);
    const signal = await postSignal(server.url, source.authKey, 'BTCUSDT,selllimit,vol=0.2,entry_price=110001');
    await waitUntil(async () => (await deliveriesOf(server, signal))[0].status === 'executed', 'the ack');
    const state = async () => (await server.admin('GET', `/api/admin/agents/${testAgent!.id}`)).body.state;
    await waitUntil(async () => (await state())?.orders?.length === 1, 'the pending order in the published state');
    await first.agent.stop();
    await first.running;

    // Meanwhile the order was filled or cancelled on the exchange: its open orders no longer list it.
    const second = await startAgent(testAgent!.token, exchange.answer, { dir: first.dir });
    await waitUntil(
      async () => ((s) => s?.orders?.length === 0 && s?.connected === true)(await state()),
      'the reconciled state',
    );
    expect(second.sent.some((r) => r.method === 'POST')).toBe(false);
  });

  it("--dry-run on a market entry: sized by risk from the recorded balance and book, with the stop and each target's lots", async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance-dry-risk']);
    const source = await sourceFor(server, accountId);
    const exchange = recordedExchange();
    await startAgent(testAgent!.token, exchange.answer, { dryRun: true });
    // Balance 31.022612 USDT (recorded), ask 42878 (recorded book): 10 % risked over 878 USDT
    // a contract is 0.0035 contracts, floored to the 0.001 step; target 1 closes 50 % floored
    // to the step, target 2 the rest.
    const signal = await postSignal(
      server.url,
      source.authKey,
      'BTCUSDT,buy,vol_pctbal_loss=10,sl_price=42000,tp1_price=43500,pct1=50,tp2_price=44000',
    );
    await waitUntil(async () => (await deliveriesOf(server, signal))[0].status === 'executed', 'the dry-run ack');
    const delivery = (await deliveriesOf(server, signal))[0];
    expect(delivery.message).toBe('dry run, nothing sent: opened buy 0.003 BTC/USDT:USDT at 42878 (position 1)');
    expect(delivery.result.orders).toMatchObject([
      { kind: 'market', side: 'buy', volume: 0.003, status: 'filled', average: 42878 },
      { kind: 'stop_loss', side: 'sell', volume: 0.003, price: 42000 },
      { kind: 'take_profit', side: 'sell', volume: 0.001, price: 43500 },
      { kind: 'take_profit', side: 'sell', volume: 0.002, price: 44000 },
    ]);
  });

  it('in one-way mode an opening against an open position of the other side is refused, saying how to do it', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance-oneway']);
    const source = await sourceFor(server, accountId);
    const exchange = recordedExchange();
    await startAgent(testAgent!.token, exchange.answer, { dryRun: true });
    const bought = await postSignal(server.url, source.authKey, 'BTCUSDT,buy,vol=0.01');
    await waitUntil(async () => (await deliveriesOf(server, bought))[0].status === 'executed', 'the buy');
    const sold = await postSignal(server.url, source.authKey, 'BTCUSDT,sell,vol=0.01');
    await waitUntil(async () => (await deliveriesOf(server, sold))[0].status === 'rejected', 'the refused sell');
    expect((await deliveriesOf(server, sold))[0].message).toBe(
      'dry run, nothing sent: the account keeps one net position per symbol (one-way mode) and position 1 (buy 0.01 BTC/USDT:USDT) is open: a sell would reduce it rather than open beside it. Close it first (exop, or closelongsell) or switch the exchange account to hedge mode and run with --position-mode hedge',
    );
    const reversed = await postSignal(server.url, source.authKey, 'BTCUSDT,closelongsell,vol=0.01');
    await waitUntil(async () => (await deliveriesOf(server, reversed))[0].status === 'executed', 'the close-then-sell');
    expect(
      (await deliveriesOf(server, reversed))[0].result.orders.map(
        (o: { kind: string; side: string; volume: number }) => [o.kind, o.side, o.volume],
      ),
    ).toEqual([
      ['market', 'sell', 0.01],
      ['market', 'sell', 0.01],
    ]);
  });

  it('in one-way mode the position targets go long, flat, short, long and flat: each reversal a close then an opening, never refused for netting', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance-oneway-targets']);
    const source = await sourceFor(server, accountId, { duplicateWindowSeconds: 10 });
    const exchange = recordedExchange();
    const { agent } = await startAgent(testAgent!.token, exchange.answer, { dryRun: true });
    const steps: [string, string[], string[]][] = [
      // target, the orders it sends (kind side lots), what the account then holds
      ['long', ['market buy 0.01'], ['buy 0.01']],
      ['flat', ['market sell 0.01'], []],
      ['short', ['market sell 0.01'], ['sell 0.01']],
      ['long', ['market buy 0.01', 'market buy 0.01'], ['buy 0.01']],
      ['long', [], ['buy 0.01']],
      ['flat', ['market sell 0.01'], []],
    ];
    for (const [target, orders, held] of steps) {
      const id = await postSignal(server.url, source.authKey, `BTCUSDT,position${target},vol=0.01`);
      await waitUntil(
        async () => ['executed', 'rejected', 'failed'].includes((await deliveriesOf(server, id))[0].status),
        `the ${target} target`,
      );
      const delivery = (await deliveriesOf(server, id))[0];
      expect(delivery.status, `${target}: ${delivery.message}`).toBe('executed');
      expect(
        delivery.result.orders.map(
          (o: { kind: string; side: string; volume: number }) => `${o.kind} ${o.side} ${o.volume}`,
        ),
        target,
      ).toEqual(orders);
      const book = (agent as unknown as { book: { state: { positions: { side: string; volume: number }[] } } }).book;
      expect(
        book.state.positions.map((p) => `${p.side} ${p.volume}`),
        target,
      ).toEqual(held);
    }
  });

  it('several signal symbols mapped to one exchange symbol trade the same position (BTCUSDT and BTCUSDT.P -> BTC/USDT:USDT)', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, ['binance-many']);
    const source = await sourceFor(server, accountId);
    const exchange = recordedExchange();
    await startAgent(testAgent!.token, exchange.answer, {
      dryRun: true,
      symbolMap: { BTCUSDT: 'BTC/USDT:USDT', 'BTCUSDT.P': 'BTC/USDT:USDT' },
    });
    const bought = await postSignal(server.url, source.authKey, 'BTCUSDT,buy,vol=0.01');
    await waitUntil(
      async () => ['executed', 'rejected', 'failed'].includes((await deliveriesOf(server, bought))[0].status),
      'the buy',
    );
    expect((await deliveriesOf(server, bought))[0]).toMatchObject({
      status: 'executed',
      message: 'dry run, nothing sent: opened buy 0.01 BTC/USDT:USDT at 42878 (position 1)',
    });
    const more = await postSignal(server.url, source.authKey, 'BTCUSDT.P,buy,vol=0.02');
    await waitUntil(
      async () => ['executed', 'rejected', 'failed'].includes((await deliveriesOf(server, more))[0].status),
      'the second buy',
    );
    expect((await deliveriesOf(server, more))[0]).toMatchObject({
      status: 'executed',
      message: 'dry run, nothing sent: opened buy 0.02 BTC/USDT:USDT at 42878 (position 2)',
    });
    // Closing through either name closes what was opened on the exchange symbol.
    const closed = await postSignal(server.url, source.authKey, 'BTCUSDT.P,closebuy');
    await waitUntil(
      async () => ['executed', 'rejected', 'failed'].includes((await deliveriesOf(server, closed))[0].status),
      'the close',
    );
    const close = (await deliveriesOf(server, closed))[0];
    expect(close.status).toBe('executed');
    expect(
      close.result.orders.map((o: { kind: string; side: string; volume: number; symbol: string }) => [
        o.kind,
        o.side,
        o.volume,
        o.symbol,
      ]),
    ).toEqual([
      ['market', 'sell', 0.01, 'BTC/USDT:USDT'],
      ['market', 'sell', 0.02, 'BTC/USDT:USDT'],
    ]);
  });
});
