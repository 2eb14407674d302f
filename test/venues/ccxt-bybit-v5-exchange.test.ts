import { afterEach, describe, expect, it } from 'vitest';
import { CcxtVenue } from '../../src/agent/venues/ccxt/ccxt-venue.js';
import { BybitV5Exchange } from '../fakes/bybit-v5-exchange.js';

const KEYS = { apiKey: 'bybit-venue-key', secret: 'bybit-venue-secret' };
const HOUR = 3600 * 1000;

/**
 * The CCXT venue against the Bybit v5 test exchange (test/fakes/bybit-v5-exchange.ts): the
 * look-up by client id, the duplicate client id refusal, and the funding payments, as Bybit's
 * documentation has them.
 */
describe('the CCXT venue on the Bybit v5 test exchange', () => {
  let exchange: BybitV5Exchange;
  let venue: CcxtVenue;
  afterEach(async () => {
    await venue?.shutdown();
    await exchange?.stop();
  });
  const open = async () => {
    exchange = await BybitV5Exchange.start(KEYS);
    venue = new CcxtVenue({
      exchange: 'bybit',
      market: 'swap',
      positionMode: 'oneway',
      sandbox: false,
      credentials: KEYS,
      proxyUrl: exchange.url,
      transport: null,
    });
    await venue.open();
  };
  const buy = (clientId: string, kind: 'market' | 'limit', mayExist = false) =>
    venue.place({
      clientId,
      symbol: 'BTC/USDT:USDT',
      side: 'buy',
      kind,
      volume: 0.01,
      price: kind === 'limit' ? 49000 : null,
      mayExist,
    });

  it("a client id the exchange does not have is not found, though another order stands (Bybit's orderLinkId)", async () => {
    await open();
    const standing = await buy('sgbybit0000000001o', 'limit');
    expect(standing.status).toBe('open');
    expect(
      await venue.find({
        clientId: 'sgbybit0000000002o',
        symbol: 'BTC/USDT:USDT',
        side: 'buy',
        kind: 'limit',
        volume: 0.01,
        price: 49000,
      }),
    ).toBeNull();
    expect(exchange.requests('GET', '/v5/order/realtime').at(-1)!.params).toMatchObject({
      orderLinkId: 'sgbybit0000000002o',
    });
    // Placed again where it may stand already: the one standing, not a second.
    expect((await buy('sgbybit0000000001o', 'limit', true)).id).toBe(standing.id);
    expect(exchange.state().orders).toHaveLength(1);
  });

  it('a client id used already (110072 "OrderLinkedID is duplicate") answers the order that has it', async () => {
    await open();
    const first = await buy('sgbybit0000000003o', 'market');
    expect(first).toMatchObject({ status: 'filled', filled: 0.01, average: 50000.1 });
    const again = await buy('sgbybit0000000003o', 'market');
    expect(again).toMatchObject({ id: first.id, status: 'filled', filled: 0.01, average: 50000.1 });
    expect(exchange.state().positions).toEqual([{ symbol: 'BTCUSDT', size: 0.01, avgPrice: 50000.1 }]);
  });

  it('the account lists all 25 open orders, though Bybit answers 20 a page unless asked for more', async () => {
    await open();
    for (let i = 0; i < 25; i += 1) {
      const id = `sg${'0'.repeat(14)}${String(i).padStart(2, '0')}o`;
      await venue.place({
        clientId: id,
        symbol: 'BTC/USDT:USDT',
        side: 'buy',
        kind: 'limit',
        volume: 0.001,
        price: 49000 - i,
      });
    }
    const { orders } = await venue.account();
    expect(orders).toHaveLength(25);
    expect(new Set(orders.map((o) => o.clientId)).size).toBe(25);
  });

  it('reads 240 payments of 10 days in cursor pages and 7-day windows, each once, paid as negative', async () => {
    await open();
    await buy('sgbybit0000000004o', 'market');
    const base = Math.floor((Date.now() - 10 * 24 * HOUR) / HOUR) * HOUR;
    for (let i = 0; i < 240; i += 1) exchange.applyFunding('BTCUSDT', 0.0001, base + i * HOUR);
    const all = await venue.funding(base);
    expect(all).toHaveLength(240);
    expect(new Set(all.map((p) => p.venueFundingId)).size).toBe(240);
    // A long of 0.01 at 50000, rate 0.01 %: execFee 0.05 paid, −0.05 in the ledger.
    expect(all[0]).toMatchObject({
      symbol: 'BTC/USDT:USDT',
      amount: -0.05,
      currency: 'USDT',
      at: new Date(base).toISOString(),
    });
    expect(all.at(-1)!.at).toBe(new Date(base + 239 * HOUR).toISOString());
    const reads = exchange.requests('GET', '/v5/execution/list').filter((r) => r.params.execType === 'Funding');
    expect(reads.map((r) => [r.params.limit, Number(r.params.startTime), r.params.cursor !== undefined])).toEqual([
      ['100', base, false],
      ['100', base, true],
      ['100', base + 7 * 24 * HOUR, false],
    ]);
    expect(await venue.funding(base + 230 * HOUR)).toHaveLength(10);
  });
});
