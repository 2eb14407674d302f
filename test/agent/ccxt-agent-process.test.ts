import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { startTestServer, type TestServer } from '../support/start-test-server.js';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { paramsOf, requestRecord, type RequestRecord } from '../venues/support/ccxt-records.js';
import { RecordedBinance } from '../venues/support/recorded-binance.js';
import { AgentProcess } from './support/agent-process.js';
import { RecordedExchangeServer, type ReceivedRequest } from './support/recorded-exchange-server.js';

/**
 * The whole path with real processes' worth of plumbing: the server, a real
 * `signalgate agent --venue ccxt --exchange binance --market swap` process (dist/, built by
 * `npm run build`) and Binance's HTTP API answered by a local server from CCXT's recorded
 * responses (recorded-binance.ts says which answers are recorded and how they were varied). The
 * agent reaches it through `--proxy-url`, CCXT's proxyUrl, as a user would reach an exchange
 * through a CORS-style proxy; its keys come from the environment. Signals go to the server by
 * HTTP; their outcomes, with the exchange's order ids and fills, are read from the signal log.
 */
const REQUESTS = 'binance-requests.json';
const KEYS = { SIGNALGATE_CCXT_API_KEY: 'recorded-key', SIGNALGATE_CCXT_SECRET: 'recorded-secret' };

/** A request's parameters, without the ones that are the request's own (time, signature, our ids) and the ones named. */
function shapeOf(
  request: { url: string; body?: string | null; output?: string | null },
  own: string[] = [],
): Record<string, string> {
  const params = paramsOf(request.url, 'output' in request ? request.output : request.body, 'urlencoded') as Record<
    string,
    string
  >;
  const skip = new Set(['timestamp', 'signature', 'recvWindow', 'newClientOrderId', 'clientAlgoId', ...own]);
  return Object.fromEntries(
    Object.entries(params)
      .filter(([k]) => !skip.has(k))
      .map(([k, v]) => [k, String(v)]),
  );
}
const record = (description: string): RequestRecord => requestRecord(REQUESTS, 'createOrder', description).record;
const params = (request: ReceivedRequest) =>
  paramsOf(request.url, request.body, 'urlencoded') as Record<string, string>;

describe('a real agent process on Binance USDⓈ-M through CCXT, the exchange answered from recorded traffic', () => {
  let server: TestServer;
  let exchange: RecordedBinance;
  let api: RecordedExchangeServer;
  let dir: string;
  const agents: AgentProcess[] = [];
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    for (const agent of agents.splice(0)) await agent.stop();
    exchange?.release();
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  async function start(name: string) {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, [name]);
    const source = await sourceFor(server, accountId);
    exchange = new RecordedBinance();
    api = await RecordedExchangeServer.start(exchange.answer);
    dir = mkdtempSync(path.join(tmpdir(), 'signalgate-ccxt-process-'));
    const run = () => {
      const agent = AgentProcess.startVenue(
        server.url,
        testAgent!.token,
        dir,
        ['--venue', 'ccxt', '--exchange', 'binance', '--market', 'swap', '--proxy-url', api.url],
        KEYS,
      );
      agents.push(agent);
      return agent;
    };
    const agent = run();
    await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready');
    const state = async () => (await server.admin('GET', `/api/admin/agents/${testAgent!.id}`)).body.state;
    return { source, agent, run, state };
  }

  const outcome = async (signal: string) => {
    await waitUntil(
      async () => ['executed', 'rejected', 'failed'].includes((await deliveriesOf(server, signal))[0].status),
      `the outcome of ${signal}`,
      30_000,
    );
    return (await deliveriesOf(server, signal))[0];
  };

  it('a market entry with stop and target, a close and a refused order: each outcome in the signal log with the exchange order ids and fills', async () => {
    const { source, agent } = await start('binance-process');
    // The markets came from the exchange (its exchangeInfo, answered from the recorded markets).
    expect(api.requests('GET', '/fapi/v1/exchangeInfo')).toHaveLength(1);

    const entry = await postSignal(server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=41000,tp_price=50000');
    const opened = await outcome(entry);
    expect(opened).toMatchObject({
      status: 'executed',
      message: 'opened buy 0.01 BTC/USDT:USDT at 47279.4 (position 1)',
    });
    expect(opened.result.orders).toMatchObject([
      {
        id: '4087922044',
        clientId: clientOrderId(entry, 'o'),
        kind: 'market',
        side: 'buy',
        volume: 0.01,
        status: 'filled',
        filled: 0.01,
        average: 47279.4,
      },
      {
        id: '3358',
        clientId: `${clientOrderId(entry, 'p1r0')}s`,
        kind: 'stop_loss',
        side: 'sell',
        volume: 0.01,
        price: 41000,
        status: 'open',
      },
      {
        id: '4087922045',
        clientId: `${clientOrderId(entry, 'p1r0')}t1`,
        kind: 'take_profit',
        side: 'sell',
        volume: 0.01,
        price: 50000,
        status: 'open',
      },
    ]);

    const close = await postSignal(server.url, source.authKey, 'BTCUSDT,closeall');
    const closed = await outcome(close);
    expect(closed.status).toBe('executed');
    expect(closed.result.orders).toMatchObject([
      {
        id: '4087922046',
        clientId: clientOrderId(close, 'c1'),
        kind: 'market',
        side: 'sell',
        volume: 0.01,
        status: 'filled',
        filled: 0.01,
        average: 47279.4,
      },
    ]);

    exchange.refuse = new Error('binance {"code":-2019,"msg":"Margin is insufficient."}');
    const refused = await postSignal(server.url, source.authKey, 'BTCUSDT,buy,vol=0.5');
    expect(await outcome(refused)).toMatchObject({
      status: 'rejected',
      message:
        'ccxt:binance refused the buy market order of 0.5 BTC/USDT:USDT: binance {"code":-2019,"msg":"Margin is insufficient."}',
    });

    // What the exchange was asked, against CCXT's recorded requests for the same operations.
    const orders = api.requests('POST', '/fapi/v1/order');
    expect(orders.map((r) => [params(r).type, params(r).side, params(r).newClientOrderId])).toEqual([
      ['MARKET', 'BUY', clientOrderId(entry, 'o')],
      ['LIMIT', 'SELL', `${clientOrderId(entry, 'p1r0')}t1`],
      ['MARKET', 'SELL', clientOrderId(close, 'c1')],
      ['MARKET', 'BUY', clientOrderId(refused, 'o')],
    ]);
    // The entry: "Swap market buy order" (LTCUSDT 0.1 recorded; BTCUSDT 0.01 here).
    expect(shapeOf(orders[0]!, ['symbol', 'quantity'])).toEqual(
      shapeOf(record('Swap market buy order'), ['symbol', 'quantity']),
    );
    // The target: "Swap limit buy with reduce only (closing short position)", mirrored: it closes a long.
    expect(shapeOf(orders[1]!, ['symbol', 'quantity', 'price', 'side'])).toEqual(
      shapeOf(record('Swap limit buy with reduce only (closing short position)'), [
        'symbol',
        'quantity',
        'price',
        'side',
      ]),
    );
    expect(params(orders[1]!)).toMatchObject({
      symbol: 'BTCUSDT',
      quantity: '0.01',
      price: '50000',
      reduceOnly: 'true',
    });
    // The close: a reduce-only market order, "Swap market buy order" with reduceOnly, selling.
    expect(shapeOf(orders[2]!, ['symbol', 'quantity', 'side'])).toEqual({
      ...shapeOf(record('Swap market buy order'), ['symbol', 'quantity', 'side']),
      reduceOnly: 'true',
    });
    // The stop: the recorded conditional stop-market order on the linear endpoint, reduce-only.
    const [stop] = api.requests('POST', '/fapi/v1/algoOrder');
    expect(shapeOf(stop!, ['symbol', 'quantity', 'triggerPrice', 'reduceOnly'])).toEqual(
      shapeOf(record('Swap inverse market sell with stopLossPrice'), ['symbol', 'quantity', 'triggerPrice']),
    );
    // The close cancelled the stop and the target: "linear swap conditional cancelOrder" and "Swap cancelOrder".
    const cancelStop = api.requests('DELETE', '/fapi/v1/algoOrder');
    const cancelTarget = api.requests('DELETE', '/fapi/v1/order');
    expect(cancelStop.map((r) => params(r).algoId)).toEqual(['3358']);
    expect(cancelTarget.map((r) => params(r).orderId)).toEqual(['4087922045']);
    const conditional = requestRecord(REQUESTS, 'cancelOrder', 'linear swap conditional cancelOrder').record;
    const plain = requestRecord(REQUESTS, 'cancelOrder', 'Swap cancelOrder').record;
    expect(shapeOf(cancelStop[0]!, ['symbol', 'algoId'])).toEqual(
      shapeOf({ url: conditional.url }, ['symbol', 'algoId']),
    );
    expect(shapeOf(cancelTarget[0]!, ['symbol', 'orderId'])).toEqual(
      shapeOf({ url: plain.url }, ['symbol', 'orderId']),
    );
    expect(exchange.openStops()).toEqual([]);
    expect(exchange.resting.size).toBe(0);

    // Signed with the key from the environment; the key and secret are not in the agent's arguments.
    expect(
      new Set(
        api.received.filter((r) => r.body?.includes('signature=') || r.url.includes('signature=')).map((r) => r.apiKey),
      ),
    ).toEqual(new Set([KEYS.SIGNALGATE_CCXT_API_KEY]));
    expect(agent.child.spawnargs.join(' ')).not.toContain(KEYS.SIGNALGATE_CCXT_SECRET);
    expect(agent.child.spawnargs.join(' ')).not.toContain(KEYS.SIGNALGATE_CCXT_API_KEY);
  });

  it('killed between placing the moved stop and cancelling the old one, the restarted agent leaves exactly one stop, at the breakeven', async () => {
    const { source, agent, run, state } = await start('binance-process-restart');
    const entry = await postSignal(server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=41000,be_trigger=500');
    expect((await outcome(entry)).status).toBe('executed');
    await waitUntil(
      async () => (await state())?.positions?.[0]?.sl === 41000,
      'the stop in the published state',
      30_000,
    );

    // Bid 47851.1, past the breakeven trigger of the 47279.4 fill; the old stop's cancel never gets an answer.
    exchange.hang = (r) => r.method === 'DELETE';
    exchange.shift = 5200;
    await waitUntil(
      () => api.requests('DELETE', '/fapi/v1/algoOrder').length === 1,
      'the cancel of the old stop',
      30_000,
    );
    expect(exchange.openStops().map((o) => o.triggerPrice)).toEqual(['41000', '47279.4']);
    await agent.kill();
    exchange.release();
    exchange.hang = null;

    const again = run();
    await again.waitForLog(
      (l) => l.msg === 'finished moving the stops the last run had begun to move',
      'the move finished',
    );
    expect(exchange.openStops().map((o) => [o.clientAlgoId, o.triggerPrice])).toEqual([
      [`${clientOrderId(entry, 'p1r1')}s`, '47279.4'],
    ]);
    expect(exchange.cancelled).toEqual([3358]);
    // Looked up by its client id, not placed a second time.
    expect(api.requests('POST', '/fapi/v1/algoOrder')).toHaveLength(2);
    // (Besides the look-ups by algoId of the stops the agent follows.)
    expect(
      api
        .requests('GET', '/fapi/v1/algoOrder')
        .filter((r) => params(r).algoId === undefined)
        .map((r) => params(r).clientAlgoId),
    ).toEqual([`${clientOrderId(entry, 'p1r1')}s`]);
    await waitUntil(
      async () => ((s) => s?.positions?.[0]?.sl === 47279.4 && s?.connected === true)(await state()),
      'the breakeven stop in the published state',
      30_000,
    );
  });
});
