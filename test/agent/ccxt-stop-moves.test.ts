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
import { fixture, paramsOf, recordedVenue, requestRecord, type SentRequest } from '../venues/support/ccxt-records.js';
import { RecordedBinance } from '../venues/support/recorded-binance.js';

/**
 * Breakeven and trailing on Binance USDⓈ-M through CCXT, end to end: the engine decides at the
 * quotes the venue reads (CCXT's recorded order book, its prices shifted: only the numbers
 * change), and the venue moves the exchange-held stop: the new reduce-only stop first, then the
 * old one cancelled, once. The requests match CCXT's recorded ones for those operations; the
 * agent's published positions show the new stop. A restart between placing the new stop and
 * cancelling the old one leaves exactly one stop.
 */
const REQUESTS = 'binance-requests.json';

describe('breakeven and trailing move the stop Binance holds', () => {
  let server: TestServer;
  const dirs: string[] = [];
  const exchanges: RecordedBinance[] = [];
  const agents: { agent: RemoteVenueAgent; running: Promise<void> }[] = [];
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterEach(async () => {
    for (const { agent, running } of agents.splice(0)) {
      await agent.stop();
      await running.catch(() => undefined);
    }
    for (const exchange of exchanges.splice(0)) exchange.release();
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  afterAll(async () => {
    await server?.stop();
  });

  function startAgent(token: string, exchange: RecordedBinance, dir: string) {
    if (!dirs.includes(dir)) dirs.push(dir);
    const { venue, sent } = recordedVenue(
      {
        exchange: 'binance',
        market: 'swap',
        markets: fixture('binance-markets.json'),
        exchangeOptions: { leverageBrackets: {} },
      },
      exchange.answer,
    );
    const agent = new RemoteVenueAgent({
      server: server.url,
      token,
      transport: 'auto',
      dataDir: dir,
      venue,
      dryRun: false,
      symbolMap: {},
      pipSizes: {},
      defaultVolumeLots: null,
      manageEveryMs: 100,
      log: pino({ level: 'silent' }),
    });
    const running = agent.run();
    running.catch(() => undefined);
    agents.push({ agent, running });
    return { agent, sent, running };
  }

  /** The stop orders sent (POST) and the cancels (DELETE) of the algo-order endpoint, in order. */
  const stopRequests = (sent: SentRequest[]) =>
    sent.filter((r) => new URL(r.url).pathname === '/fapi/v1/algoOrder' && r.method !== 'GET');

  /** Same path and parameters as CCXT's record, apart from the values that are the order's own (prices, ids, time, signature). */
  function expectShape(
    sent: SentRequest,
    record: { url: string; output?: string | null },
    own: string[],
    expected: Record<string, string>,
  ) {
    const got = paramsOf(sent.url, sent.body, 'urlencoded') as Record<string, string>;
    const want = paramsOf(record.url, record.output, 'urlencoded') as Record<string, string>;
    const skip = new Set(['timestamp', 'signature', 'recvWindow', 'newClientOrderId', ...own]);
    const strip = (p: Record<string, string>) => Object.fromEntries(Object.entries(p).filter(([k]) => !skip.has(k)));
    return { got, want: strip(want), strip: strip(got), expected };
  }

  async function openLong(name: string) {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server, [name]);
    const source = await sourceFor(server, accountId);
    const exchange = new RecordedBinance();
    exchanges.push(exchange);
    const dir = mkdtempSync(path.join(tmpdir(), 'signalgate-ccxt-moves-'));
    const first = startAgent(testAgent!.token, exchange, dir);
    // Filled at 47279.4 (the recorded market order); breakeven at +500, trailing 800 behind from +1000.
    const signal = await postSignal(
      server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=41000,be_trigger=500,trail_trigger=1000,trail_distance=800',
    );
    await waitUntil(async () => (await deliveriesOf(server, signal))[0].status === 'executed', 'the ack of the buy');
    const state = async () => (await server.admin('GET', `/api/admin/agents/${testAgent!.id}`)).body.state;
    return { testAgent: testAgent!, exchange, dir, first, signal, state };
  }

  it('breakeven then trailing: each move places the new stop like the recorded conditional order and cancels the old one once', async () => {
    const { exchange, first, signal, state } = await openLong('binance-moves');
    const delivery = (await deliveriesOf(server, signal))[0];
    expect(delivery.result.orders).toMatchObject([
      { kind: 'market', side: 'buy', volume: 0.01, status: 'filled', average: 47279.4 },
      {
        kind: 'stop_loss',
        side: 'sell',
        volume: 0.01,
        price: 41000,
        status: 'open',
        id: '3358',
        clientId: `${clientOrderId(signal, 'p1r0')}s`,
      },
    ]);
    await waitUntil(async () => (await state())?.positions?.[0]?.sl === 41000, 'the stop in the published state');

    // Bid 47851.1: 571.7 in profit, past the breakeven trigger: the stop goes to the entry.
    exchange.shift = 5200;
    await waitUntil(
      async () => (await state())?.positions?.[0]?.sl === 47279.4,
      'the breakeven stop in the published state',
    );
    await waitUntil(() => exchange.cancelled.length === 1, 'the old stop cancelled');
    // Bid 48851.1: 1571.7 in profit, trailing 800 behind: 48051.1.
    exchange.shift = 6200;
    await waitUntil(
      async () => (await state())?.positions?.[0]?.sl === 48051.1,
      'the trailing stop in the published state',
    );
    await waitUntil(() => exchange.cancelled.length === 2, 'the breakeven stop cancelled');

    expect(exchange.openStops().map((o) => [o.clientAlgoId, o.triggerPrice])).toEqual([
      [`${clientOrderId(signal, 'p1r2')}s`, '48051.1'],
    ]);
    expect(exchange.cancelled).toEqual([3358, 3359]);

    const requests = stopRequests(first.sent);
    expect(requests.map((r) => r.method)).toEqual(['POST', 'POST', 'DELETE', 'POST', 'DELETE']);
    // Each new stop: CCXT's recorded conditional stop-market order ("Swap inverse market sell with
    // stopLossPrice", the only one its records hold) on the linear endpoint, made reduce-only.
    const stopRecord = requestRecord(REQUESTS, 'createOrder', 'Swap inverse market sell with stopLossPrice').record;
    for (const [request, revision, trigger] of [
      [requests[1]!, 'p1r1', '47279.4'],
      [requests[3]!, 'p1r2', '48051.1'],
    ] as const) {
      expect(new URL(request.url).pathname).toBe(new URL(stopRecord.url).pathname.replace('/dapi/', '/fapi/'));
      const shape = expectShape(
        request,
        stopRecord,
        ['clientAlgoId', 'symbol', 'quantity', 'triggerPrice', 'reduceOnly'],
        {},
      );
      expect(shape.strip).toEqual(shape.want);
      expect(shape.got).toMatchObject({
        symbol: 'BTCUSDT',
        side: 'SELL',
        type: 'STOP_MARKET',
        quantity: '0.01',
        triggerPrice: trigger,
        reduceOnly: 'true',
        clientAlgoId: `${clientOrderId(signal, revision)}s`,
      });
    }
    // Each cancel: CCXT's recorded "linear swap conditional cancelOrder", with the old stop's id.
    const cancelRecord = requestRecord(REQUESTS, 'cancelOrder', 'linear swap conditional cancelOrder').record;
    for (const [request, algoId] of [
      [requests[2]!, '3358'],
      [requests[4]!, '3359'],
    ] as const) {
      expect(new URL(request.url).pathname).toBe(new URL(cancelRecord.url).pathname);
      const shape = expectShape(request, cancelRecord, ['algoId'], {});
      expect(shape.strip).toEqual(shape.want);
      expect(shape.got.algoId).toBe(algoId);
    }
  });

  it('a moved stop the exchange refuses leaves the old stop standing and is tried again until it goes through, then the old one is cancelled once', async () => {
    const { exchange, first, signal, state } = await openLong('binance-moves-refused');
    await waitUntil(async () => (await state())?.positions?.[0]?.sl === 41000, 'the stop in the published state');
    exchange.refuseStops = new ccxt.OrderImmediatelyFillable(
      'binance {"code":-2021,"msg":"Order would immediately trigger."}',
    );
    exchange.shift = 5200;
    await waitUntil(
      () => stopRequests(first.sent).filter((r) => r.method === 'POST').length >= 3,
      'the moved stop tried twice',
    );
    expect(exchange.openStops().map((o) => o.triggerPrice)).toEqual(['41000']);
    expect(exchange.cancelled).toEqual([]);

    exchange.refuseStops = null;
    await waitUntil(() => exchange.cancelled.length === 1, 'the old stop cancelled');
    expect(exchange.openStops().map((o) => [o.clientAlgoId, o.triggerPrice])).toEqual([
      [`${clientOrderId(signal, 'p1r1')}s`, '47279.4'],
    ]);
    expect(exchange.cancelled).toEqual([3358]);
    await waitUntil(
      async () => (await state())?.positions?.[0]?.sl === 47279.4,
      'the breakeven stop in the published state',
    );
  });

  it('a restart between placing the new stop and cancelling the old one leaves exactly one stop, at the new level', async () => {
    const { testAgent, exchange, dir, first, signal, state } = await openLong('binance-moves-restart');
    await waitUntil(async () => (await state())?.positions?.[0]?.sl === 41000, 'the stop in the published state');

    // The cancel of the old stop never gets its answer: the agent stops while it waits, and
    // the exchange did not act on it.
    exchange.hang = (r) => r.method === 'DELETE';
    exchange.shift = 5200;
    await waitUntil(() => exchange.openStops().length === 2, 'the new stop placed');
    await waitUntil(() => first.sent.some((r) => r.method === 'DELETE'), 'the cancel sent');
    await agents[0]!.agent.stop();
    await first.running;
    agents.splice(0, 1);
    exchange.release();
    exchange.hang = null;
    expect(exchange.openStops().map((o) => o.triggerPrice)).toEqual(['41000', '47279.4']);

    const second = startAgent(testAgent.token, exchange, dir);
    await waitUntil(() => exchange.openStops().length === 1, 'one stop left');
    expect(exchange.openStops().map((o) => [o.clientAlgoId, o.triggerPrice])).toEqual([
      [`${clientOrderId(signal, 'p1r1')}s`, '47279.4'],
    ]);
    expect(exchange.cancelled).toEqual([3358]);
    // The new stop was looked up by its client id, not placed again.
    // (Besides the look-ups by algoId of the stops the agent follows, found open on start.)
    const restart = second.sent.filter(
      (r) =>
        new URL(r.url).pathname === '/fapi/v1/algoOrder' &&
        !(r.method === 'GET' && paramsOf(r.url, r.body, 'urlencoded').algoId !== undefined),
    );
    expect(restart.map((r) => r.method)).toEqual(['GET', 'DELETE']);
    expect(paramsOf(restart[0]!.url, restart[0]!.body, 'urlencoded')).toMatchObject({
      symbol: 'BTCUSDT',
      clientAlgoId: `${clientOrderId(signal, 'p1r1')}s`,
    });
    await waitUntil(
      async () => ((s) => s?.positions?.[0]?.sl === 47279.4 && s?.connected === true)(await state()),
      'the new stop in the published state',
    );
    // Nothing moves again at the same price.
    expect(stopRequests(second.sent).filter((r) => r.method === 'POST')).toEqual([]);
  });
});
