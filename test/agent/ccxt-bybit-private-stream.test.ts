import { describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { BybitRequest } from '../fakes/bybit-v5-exchange.js';
import { BYBIT, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';
import { betweenPasses, streamConnected } from '../support/private-stream-waits.js';

/**
 * The exchange's private stream on Bybit: a real `signalgate agent --venue ccxt --exchange bybit`
 * process against the Bybit v5 test exchange, which pushes its private stream's `order` topic
 * over a websocket reached through `--proxy-url` as its REST API is. Without the stream the agent
 * learns an exit at its next look-up of the order, every 2 s; with it, it looks the order up as
 * soon as the stream names it.
 */
describe('the exchange private stream on the Bybit v5 test exchange', () => {
  const bed = useCcxtAgentBed(BYBIT);
  const held = () => bed.exchange.state();
  const connected = streamConnected;
  /** A look-up of the order by its id (GET /v5/order/realtime): the next is a management pass away. */
  const betweenLookUps = (orderId: string) =>
    betweenPasses(
      (hook) => bed.exchange.onAnswered(hook),
      (request) =>
        request.method === 'GET' && request.path === '/v5/order/realtime' && request.params.orderId === orderId,
    );
  const cancelsOf = (orderId: string, from: number) =>
    bed.exchange
      .requests('POST', '/v5/order/cancel')
      .filter((r: BybitRequest) => r.params.orderId === orderId && r.at >= from);

  it('a target filled in a spike is known within 1.5 s: position gone, its stop cancelled once', async () => {
    const source = await bed.start('bybit-stream-exit', { args: ['--reconcile-every', '3600'] });
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect((await bed.outcome(entry)).status).toBe('executed');
    await connected(source.published, 1);
    const target = held().openOrders.find((o) => o.orderLinkId === `${clientOrderId(entry, 'p1r0')}t1`)!.orderId;
    const stop = held().openOrders.find((o) => o.orderLinkId === `${clientOrderId(entry, 'p1r0')}s`)!.orderId;

    // The next look-up of the target is a management pass (about 1.7 s) away.
    await betweenLookUps(target);
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
    const cancels = cancelsOf(stop, spikeAt);
    expect({
      reportedWithin: reportedAt - spikeAt < 1500,
      publishedWithin: goneAt - spikeAt < 1500,
      by: (report.report as { by?: string }).by,
      price: (report.report as { price?: number }).price,
      // Bybit deactivates the reduce-only stop with the position; the agent cancels it all the same.
      stopCancelledWithin: cancels.length === 1 && cancels[0]!.at - spikeAt < 1500,
      openOrders: held().openOrders,
    }).toEqual({
      reportedWithin: true,
      publishedWithin: true,
      by: 'take_profit',
      price: 51000,
      stopCancelledWithin: true,
      openOrders: [],
    });
  });

  it('a stop triggered in a dip is known within 1.5 s: its fill read at once, the target cancelled by the agent', async () => {
    const source = await bed.start('bybit-stream-stop', { args: ['--reconcile-every', '3600'] });
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect((await bed.outcome(entry)).status).toBe('executed');
    await connected(source.published, 1);
    const stop = held().openOrders.find((o) => o.orderLinkId === `${clientOrderId(entry, 'p1r0')}s`)!.orderId;
    const target = held().openOrders.find((o) => o.orderLinkId === `${clientOrderId(entry, 'p1r0')}t1`)!.orderId;

    // The next look-up of the stop is a management pass (about 1.7 s) away.
    await betweenLookUps(stop);
    bed.exchange.setPrice('BTCUSDT', 48990);
    const dipAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    bed.exchange.setPrice('BTCUSDT', 50000);
    expect(held().positions).toEqual([]);

    const report = await source.agent.waitForLog(
      (l) => l.msg === 'venue report' && (l.report as { by?: string })?.by === 'stop_loss',
      'the stop reported',
    );
    await waitUntil(
      async () => (await source.published())?.positions?.length === 0,
      'the position gone from the published state',
      10_000,
    );
    const cancels = cancelsOf(target, dipAt);
    expect({
      reportedWithin: Date.parse(String(report.time)) - dipAt < 1500,
      // The stop's fill is the exchange's: its trigger sold at the bid of the dip.
      price: (report.report as { price?: number }).price,
      targetCancelledWithin: cancels.length === 1 && cancels[0]!.at - dipAt < 1500,
      openOrders: held().openOrders,
    }).toEqual({ reportedWithin: true, price: 48990, targetCancelledWithin: true, openOrders: [] });
  });

  it('a pending entry filled between two passes is known within 1.5 s: its stop placed at once', async () => {
    const source = await bed.start('bybit-stream-entry', { args: ['--reconcile-every', '3600'] });
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buylimit,vol=0.01,entry_price=49900,sl_price=49000',
    );
    expect((await bed.outcome(entry)).status).toBe('executed');
    await connected(source.published, 1);
    const pending = held().openOrders.find((o) => o.orderLinkId === clientOrderId(entry, 'o'))!.orderId;

    await betweenLookUps(pending);
    bed.exchange.setPrice('BTCUSDT', 49900);
    const filledAt = Date.now();
    await waitUntil(
      () => held().openOrders.some((o) => o.reduceOnly && o.triggerPrice === 49000),
      'the stop placed once the entry filled',
      10_000,
    );
    const stop = held().openOrders.find((o) => o.reduceOnly && o.triggerPrice === 49000)!;
    expect({
      placedWithin: stop.createdTime - filledAt < 1500,
      positions: held().positions,
    }).toEqual({ placedWithin: true, positions: [{ symbol: 'BTCUSDT', size: 0.01, avgPrice: 49900 }] });
  });

  it('the exchange drops the stream: the agent reconnects and reconciles at once, finding what happened meanwhile', async () => {
    // Reconciled only at start and after a reconnect: the hour's interval cannot explain it.
    const source = await bed.start('bybit-stream-reconnect', { args: ['--reconcile-every', '3600'] });
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buy,vol=0.01,sl_price=49000,tp_price=51000',
    );
    expect((await bed.outcome(entry)).status).toBe('executed');
    await connected(source.published, 1);

    // Closed by hand on the website while the agent has no stream: its pushes reach nobody.
    await bed.control('stream-drop', '');
    bed.exchange.closePosition('BTCUSDT');
    const droppedAt = Date.now();
    await connected(source.published, 2);
    await waitUntil(
      async () => (await source.published())?.positions?.length === 0,
      'the position gone from the published state',
      10_000,
    );
    expect(bed.exchange.stream.connections).toBe(2);
    // The reconciliation's listing of the open orders (a pass looks each order up by its id).
    const listings = bed.exchange
      .requests('GET', '/v5/order/realtime')
      .filter((r) => r.at > droppedAt && r.params.orderId === undefined && r.params.orderLinkId === undefined);
    expect(listings.length).toBeGreaterThan(0);
    expect(held().openOrders).toEqual([]);
    expect((await source.published()).privateStream).toEqual({ state: 'connected', connections: 2 });
  });
  it('the stream refused (at the connection, then its auth as badly signed): the agent lives on, says it once, and connects when it can', async () => {
    const source = await bed.start('bybit-stream-refused');
    await connected(source.published, 1);
    // Dropped; the next connection refused; the one after it opens but its auth is refused.
    await bed.control('stream-refuse', 'at=upgrade&count=1');
    await bed.control('stream-refuse', 'at=auth&count=1');
    await bed.control('stream-drop', '');
    // A connection counts once subscribed: the one whose auth was refused never did.
    await connected(source.published, 2);
    const warnings = source.agent
      .lines()
      .filter((l) => String(l.msg).startsWith("the exchange's private stream failed"));
    expect({
      refusedAuths: bed.exchange.stream.refusedAuths,
      sockets: bed.exchange.stream.connections,
      // The drop, the refused connection and the refused auth: one warning for the outage.
      warnings: warnings.length,
      alive: source.agent.child.exitCode === null && source.agent.child.signalCode === null,
      stream: (await source.published()).privateStream,
    }).toEqual({
      refusedAuths: 1,
      sockets: 3,
      warnings: 1,
      alive: true,
      stream: { state: 'connected', connections: 2 },
    });
  });
  it('the stream refused from the start (its first connection, then its first auth): the agent starts, and connects when it can', async () => {
    const source = await bed.start('bybit-stream-refused-start');
    await connected(source.published, 1);
    // Published as reconnected once, so that the new process's first connection is told apart.
    await bed.control('stream-drop', '');
    await connected(source.published, 2);
    await source.agent.kill();
    await bed.control('stream-refuse', 'at=upgrade&count=1');
    await bed.control('stream-refuse', 'at=auth&count=1');
    const agent = await source.run();
    await connected(source.published, 1);
    expect({
      refusedAuths: bed.exchange.stream.refusedAuths,
      // The first process's two, the one whose auth was refused, and this one.
      sockets: bed.exchange.stream.connections,
      alive: agent.child.exitCode === null && agent.child.signalCode === null,
    }).toEqual({ refusedAuths: 1, sockets: 4, alive: true });
  });
});
