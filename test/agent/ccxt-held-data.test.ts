import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { FakeRequest } from '../fakes/binance-usdm-exchange.js';
import { BINANCE_USDM, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';

/**
 * A real `signalgate agent --venue ccxt --exchange binanceusdm` process deciding on the data it
 * holds (docs/venues/ccxt.md, "What the agent holds"): the Binance USDⓈ-M test exchange's request
 * log and its held answers (`/_control/hold`) show which reads stood in front of an order.
 */
const DEPTH = '/fapi/v1/depth';

describe('a CCXT agent decides on the data it holds', () => {
  const bed = useCcxtAgentBed(BINANCE_USDM);
  // The reconciliation's reads kept out of the way: what stands in front of an order is the signal's own.
  const start = async (name: string) => ({ source: await bed.start(name, { args: ['--reconcile-every', '600'] }) });
  const control = bed.control;
  const outcome = (signal: string) => bed.outcome(signal);
  /** Waits for the next background read of the top of book, then has the exchange answer the one after it `seconds` late. */
  const holdNextDepthRead = async (seconds: number) => {
    const seen = bed.exchange.requests('GET', DEPTH).length;
    await waitUntil(() => bed.exchange.requests('GET', DEPTH).length > seen, 'a background read of the book', 5000);
    await control('hold', `method=GET&path=${DEPTH}&seconds=${seconds}&count=1`);
  };
  const orderAfter = async (t0: number): Promise<FakeRequest> => {
    await waitUntil(
      () => bed.exchange.requests('POST', '/fapi/v1/order').some((r) => r.at >= t0),
      'the order at the exchange',
      20_000,
    );
    return bed.exchange.requests('POST', '/fapi/v1/order').find((r) => r.at >= t0)!;
  };

  it('a market entry is sent with no read in front of it when the held quote and balance are fresh', async () => {
    const { source } = await start('held-fresh');
    const first = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01');
    expect((await outcome(first)).status).toBe('executed');
    await new Promise((resolve) => setTimeout(resolve, 500));
    // The agent's next read of the book is answered 3 s late: an order that waited for one comes 3 s late.
    await holdNextDepthRead(3);
    const t0 = Date.now();
    const second = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.02');
    const order = await orderAfter(t0);
    expect(order.at - t0).toBeLessThan(1500);
    const between = bed.exchange.received.filter((r) => r.at >= t0 && r.at <= order.at && r.method === 'GET');
    // At most the held background read of the book (answered after the order): no account read, no second book read.
    expect(between.filter((r) => r.path !== DEPTH)).toEqual([]);
    expect(between.filter((r) => r.path === DEPTH).length).toBeLessThanOrEqual(1);
    const done = await outcome(second);
    expect(done).toMatchObject({ status: 'executed', message: expect.stringContaining('opened buy 0.02') });
    expect(done.message).not.toContain('read again');
  });

  it('after a close, the next signal sizes on the balance the close left, without reading it in front of its order', async () => {
    const { source } = await start('held-after-fill');
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=1');
    expect((await outcome(entry)).status).toBe('executed');
    await control('price', 'symbol=BTCUSDT&price=60000');
    // Closed at 60000: the wallet gains 9999.9 (no fees here), about twice what it was.
    const close = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,closelong');
    expect((await outcome(close)).status).toBe('executed');
    const wallet = (bed.exchange.state() as { wallet: number }).wallet;
    expect(wallet).toBeCloseTo(10_000 + 9999.9, 6);
    await new Promise((resolve) => setTimeout(resolve, 500));
    await holdNextDepthRead(3);
    const t0 = Date.now();
    // 1% of the balance lost at a stop 1000 below: 0.2 BTC on 19999.9, where the balance before the close gives 0.1.
    const sized = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol_pctbal_loss=1,sl_price=59000.1');
    const order = await orderAfter(t0);
    expect(order.at - t0).toBeLessThan(1500);
    expect(Number(order.params.quantity)).toBeGreaterThanOrEqual(0.19);
    expect(Number(order.params.quantity)).toBeLessThanOrEqual(0.2);
    expect((await outcome(sized)).message).not.toContain('read again');
  });

  it('a held quote older than its bound is read again before deciding, and the outcome says so', async () => {
    const { source } = await start('held-stale');
    // Quoted for a decision (a close with nothing to close): the symbol is kept quoted; with no
    // position, no management pass reads its quote.
    const first = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,closelong');
    expect((await outcome(first)).status).toBe('rejected');
    // The background read of the book stalls: the held quote ages past its 1 s bound.
    await holdNextDepthRead(4);
    await new Promise((resolve) => setTimeout(resolve, 1800));
    const second = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01');
    const done = await outcome(second);
    expect(done.status).toBe('executed');
    expect(done.message).toMatch(
      /the held BTC\/USDT:USDT quote was \d\.\d s old \(bound 1\.0 s\): read again before deciding/,
    );
  });
  it('with several symbols watched, one read of every best bid and ask keeps them fresh, not an order book each', async () => {
    const { source } = await start('held-many');
    for (const signal of ['BTCUSDT,buy,vol=0.01', 'ETHUSDT,buy,vol=0.01'])
      expect((await outcome(await postSignal(bed.server.url, source.authKey, signal))).status).toBe('executed');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const t0 = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const reads = bed.exchange.received.filter((r) => r.at >= t0 && r.method === 'GET');
    // Binance's book ticker without a symbol (weight 5) about every 0.4 s, in place of two order books (weight 2 each).
    expect(
      reads.filter((r) => r.path === '/fapi/v1/ticker/bookTicker' && r.params.symbol === undefined).length,
    ).toBeGreaterThanOrEqual(2);
    expect(reads.filter((r) => r.path === DEPTH)).toEqual([]);
    // And a decision takes them: no read of the book in front of the order.
    const t1 = Date.now();
    const next = await postSignal(bed.server.url, source.authKey, 'ETHUSDT,buy,vol=0.02');
    const order = await orderAfter(t1);
    expect(bed.exchange.received.filter((r) => r.at >= t1 && r.at <= order.at && r.path === DEPTH)).toEqual([]);
    expect((await outcome(next)).message).not.toContain('read again');
  });
});
