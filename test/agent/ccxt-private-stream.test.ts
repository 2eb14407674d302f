import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { FakeAlgoOrder, FakeOrder, FakeRequest } from '../fakes/binance-usdm-exchange.js';
import { BINANCE_USDM, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';
import { betweenPasses, streamConnected } from '../support/private-stream-waits.js';

/**
 * The exchange's private stream: a real `signalgate agent --venue ccxt --exchange binanceusdm`
 * process against the Binance USDⓈ-M test exchange, which pushes its user data stream
 * (ORDER_TRADE_UPDATE, ALGO_UPDATE, ACCOUNT_UPDATE) over a websocket reached through
 * `--proxy-url` as its REST API is. Without the stream the agent learns an exit at its next
 * look-up of the order, every 2 s.
 */
interface ExchangeState {
  positions: { symbol: string; amount: number }[];
  openOrders: FakeOrder[];
  openAlgoOrders: FakeAlgoOrder[];
}

describe('the exchange private stream on the Binance USDⓈ-M test exchange', () => {
  const bed = useCcxtAgentBed(BINANCE_USDM);
  const held = () => bed.exchange.state() as unknown as ExchangeState;
  const connected = streamConnected;
  /** A look-up of the order by `key` = `id` (GET `path`): the next is a management pass away. */
  const betweenLookUps = (path: string, key: string, id: number) =>
    betweenPasses(
      (hook) => bed.exchange.onMoment(hook && ((request, moment) => void (moment === 'answered' && hook(request)))),
      (request) => request.method === 'GET' && request.path === path && request.params[key] === String(id),
    );
  const lookUpsOf = (orderId: number, from: number, to: number) =>
    bed.exchange
      .requests('GET', '/fapi/v1/order')
      .filter((r: FakeRequest) => r.params.orderId === String(orderId) && r.at >= from && r.at <= to);

  it('a target filled in a spike is known within 1.5 s, without a look-up: position gone, stop cancelled', async () => {
    const source = await bed.start('stream-exit', { args: ['--reconcile-every', '3600'] });
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect((await bed.outcome(entry)).status).toBe('executed');
    await connected(source.published, 1);
    const target = held().openOrders[0]!.orderId;

    // The next look-up of the target is a management pass (about 1.7 s) away.
    await betweenLookUps('/fapi/v1/order', 'orderId', target);
    bed.exchange.setPrice('BTCUSDT', 51000);
    const spikeAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    bed.exchange.setPrice('BTCUSDT', 50000);
    expect(held().positions).toEqual([]);

    let goneAt = 0;
    await waitUntil(
      async () => {
        if ((await source.published())?.positions?.length !== 0) return false;
        goneAt = Date.now();
        return true;
      },
      'the position gone from the published state',
      10_000,
    );
    const report = await source.agent.waitForLog(
      (l) => l.msg === 'venue report' && (l.report as { type?: string })?.type === 'position_reduced',
      'the target reported',
    );
    const reportedAt = Date.parse(String(report.time));
    const cancels = bed.exchange.requests('DELETE', '/fapi/v1/algoOrder').filter((r) => r.at >= spikeAt);
    expect({
      // Learnt from the stream, not from reading the order again.
      lookUps: lookUpsOf(target, spikeAt, reportedAt).length,
      reportedWithin: reportedAt - spikeAt < 1500,
      publishedWithin: goneAt - spikeAt < 1500,
      stopCancelledWithin: cancels.length === 1 && cancels[0]!.at - spikeAt < 1500,
      openAlgoOrders: held().openAlgoOrders.length,
    }).toEqual({
      lookUps: 0,
      reportedWithin: true,
      publishedWithin: true,
      stopCancelledWithin: true,
      openAlgoOrders: 0,
    });
  });

  it('a stop triggered in a dip is known within 1.5 s: its fill read at once, the target cancelled by the agent', async () => {
    const source = await bed.start('stream-stop', { args: ['--reconcile-every', '3600'] });
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect((await bed.outcome(entry)).status).toBe('executed');
    await connected(source.published, 1);
    const stop = held().openAlgoOrders[0]!.algoId;

    // The next look-up of the stop is a management pass (about 1.7 s) away.
    await betweenLookUps('/fapi/v1/algoOrder', 'algoId', stop);
    bed.exchange.setPrice('BTCUSDT', 48990);
    const dipAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    bed.exchange.setPrice('BTCUSDT', 50000);
    expect(held().positions).toEqual([]);

    const report = await source.agent.waitForLog(
      (l) => l.msg === 'venue report' && (l.report as { by?: string })?.by === 'stop_loss',
      'the stop reported',
    );
    // The exchange expires the reduce-only target with the position; the agent cancels it all the same.
    await waitUntil(
      () => bed.exchange.requests('DELETE', '/fapi/v1/order').some((r) => r.at >= dipAt),
      "the agent's cancel of the target",
      10_000,
    );
    const cancels = bed.exchange.requests('DELETE', '/fapi/v1/order').filter((r) => r.at >= dipAt);
    expect({
      reportedWithin: Date.parse(String(report.time)) - dipAt < 1500,
      targetCancelledWithin: cancels.length === 1 && cancels[0]!.at - dipAt < 1500,
      // The stop's fill is the exchange's: its trigger sold at the bid of the dip.
      price: (report.report as { price?: number }).price,
    }).toEqual({ reportedWithin: true, targetCancelledWithin: true, price: 48990 });
  });

  it('the exchange drops the stream: the agent reconnects and reconciles at once, finding what happened meanwhile', async () => {
    // Reconciled only at start and after a reconnect: the hour's interval cannot explain it.
    const source = await bed.start('stream-reconnect', { args: ['--reconcile-every', '3600'] });
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect((await bed.outcome(entry)).status).toBe('executed');
    await connected(source.published, 1);

    // Closed by hand on the website while the agent has no stream: its events reach nobody.
    bed.exchange.stream.drop();
    bed.exchange.closePosition('BTCUSDT');
    const droppedAt = Date.now();
    await connected(source.published, 2);
    await waitUntil(
      async () => (await source.published())?.positions?.length === 0,
      'the position gone from the published state',
      10_000,
    );
    await waitUntil(() => held().openAlgoOrders.length === 0, 'the orphaned stop cancelled', 10_000);
    expect(bed.exchange.stream.connections).toBe(2);
    expect(bed.exchange.requests('GET', '/fapi/v1/openAlgoOrders').some((r) => r.at > droppedAt)).toBe(true);
    expect((await source.published()).privateStream).toEqual({ state: 'connected', connections: 2 });
  });

  it('the listenKey expires (no event follows on that connection): the agent asks for a new key and connects again', async () => {
    const source = await bed.start('stream-expiry');
    await connected(source.published, 1);
    await bed.control('listenkey-expire', '');
    await connected(source.published, 2);
    expect(bed.exchange.requests('POST', '/fapi/v1/listenKey')).toHaveLength(2);
  });
});
