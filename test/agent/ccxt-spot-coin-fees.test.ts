import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { SpotOrder } from '../fakes/binance-spot-exchange.js';
import { BINANCE_SPOT, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';

/**
 * A real `signalgate agent --venue ccxt --exchange binance --market spot` process against the
 * Binance spot test exchange charging 0.1 % commission, taken as Binance takes it: a buy's in the
 * coin bought (0.01 BTC bought leaves 0.00999 BTC), unless the account pays fees with BNB. The
 * position is what the account keeps, rounded down to the lot step (0.00001 BTC): its stop or
 * target sells exactly that, a close sells it all, and the reconciliation finds the book equal to
 * the coins held. What is left below one step (dust) stays in the account.
 */
interface ExchangeState {
  balances: Record<string, { free: number; locked: number }>;
  openOrders: SpotOrder[];
  orders: SpotOrder[];
}

const SPOT = ['--market', 'spot', '--reconcile-every', '1'];
/** What the reconciliation says when the book holds more than the account. */
const FINDING = /smaller at the venue|no longer holds/;

describe('a real agent process on the Binance spot test exchange taking its fee from the coins bought', () => {
  const bed = useCcxtAgentBed(BINANCE_SPOT);
  const held = () => bed.exchange.state() as unknown as ExchangeState;
  const positionsOf = async (published: () => Promise<any>) =>
    ((await published())?.positions ?? []).map((p: any) => p.volume);
  const findings = (lines: { level: number; msg: unknown }[]) =>
    lines.filter((l) => l.level >= 40 && FINDING.test(String(l.msg)));
  const reconciled = () => new Promise((resolve) => setTimeout(resolve, 3500));

  it('a buy of 0.01 BTC at 0.1 %: a position and a stop of 0.00999, no finding, and a close that sells it all', async () => {
    const source = await bed.start('fee-stop', { args: SPOT });
    await bed.control('fees', 'rate=0.001');
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000');
    const outcome = await bed.outcome(entry);
    expect(outcome).toMatchObject({ status: 'executed' });
    expect(outcome.message).toContain('opened buy 0.00999 BTC/USDT');
    expect(outcome.message).not.toContain(' of 0.01');
    expect(outcome.message).toContain('took its fee of 0.00001 BTC from the 0.01 BTC bought');
    expect(held().balances.BTC).toEqual({ free: 0, locked: 0.00999 });
    expect(held().openOrders).toEqual([expect.objectContaining({ type: 'STOP_LOSS', side: 'SELL', origQty: 0.00999 })]);
    await waitUntil(
      async () => JSON.stringify(await positionsOf(source.published)) === '[0.00999]',
      'the position of 0.00999 published',
      8000,
    );
    await reconciled();
    expect(findings(source.agent.lines())).toEqual([]);
    expect(await positionsOf(source.published)).toEqual([0.00999]);

    const exit = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,closebuy');
    const closed = await bed.outcome(exit);
    expect(closed).toMatchObject({ status: 'executed' });
    const sells = held().orders.filter((o) => o.side === 'SELL' && o.type === 'MARKET');
    expect(sells).toEqual([expect.objectContaining({ origQty: 0.00999, status: 'FILLED' })]);
    expect(held().balances.BTC).toEqual({ free: 0, locked: 0 });
    expect(held().openOrders).toEqual([]);
    await waitUntil(async () => (await positionsOf(source.published)).length === 0, 'the position gone', 8000);
    expect(findings(source.agent.lines())).toEqual([]);
    expect(source.agent.lines().filter((l) => l.level >= 50)).toEqual([]);
    // The ledger: one trade of the 0.00999 held, closed whole (nothing left open), its entry fee the exchange's.
    const trades = async () =>
      (await bed.server.admin('GET', `/api/admin/ledger/trades?accountId=${source.accountId}`)).body.trades as any[];
    await waitUntil(
      async () => (await trades()).some((t) => t.exitAt !== null),
      'the closed trade in the ledger',
      30_000,
    );
    expect(await trades()).toEqual([
      expect.objectContaining({ lots: 0.00999, entryPrice: 50000.01, exitPrice: 50000 }),
    ]);
    // Fees in USDT, the account's currency: the 0.00001 BTC the buy paid at its price (0.5000001),
    // and the sell's 0.1 % of 0.00999 × 50000 (0.4995). Not the BTC fee's number taken as USDT.
    const [trade] = await trades();
    expect(trade.fees).toBeCloseTo(0.5000001 + 0.4995, 6);
    expect(trade.realizedProfit).toBeCloseTo((50000 - 50000.01) * 0.00999 - (0.5000001 + 0.4995), 2);
  });

  it('a close the exchange refuses after the stop was cancelled to free the coins: the stop is placed again', async () => {
    const source = await bed.start('refused-close', { args: SPOT });
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000');
    expect((await bed.outcome(entry)).status).toBe('executed');
    const first = held().openOrders[0]!;
    expect(first).toMatchObject({ type: 'STOP_LOSS', side: 'SELL', origQty: 0.01 });
    const refusal = encodeURIComponent('Account has insufficient balance for requested action.');
    await bed.control('fail', `method=POST&path=/api/v3/order&code=-2010&msg=${refusal}&count=1`);
    const exit = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,closebuy');
    const refused = await bed.outcome(exit);
    expect(refused.status).toBe('rejected');
    expect(refused.message).toContain('insufficient balance');
    expect(refused.message).toContain('were cancelled first to free the coins: they are placed again');
    // Not left unprotected: the next pass finds the position without a stop and places one.
    await waitUntil(
      () => held().openOrders.some((o) => o.type === 'STOP_LOSS' && o.orderId !== first.orderId),
      'the stop placed again',
      8000,
    );
    expect(held().openOrders).toEqual([expect.objectContaining({ type: 'STOP_LOSS', side: 'SELL', origQty: 0.01 })]);
    expect(await positionsOf(source.published)).toEqual([0.01]);
    // The close sent again sells it all.
    const again = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,closebuy');
    expect((await bed.outcome(again)).status).toBe('executed');
    expect(held().openOrders).toEqual([]);
    expect(held().balances.BTC).toEqual({ free: 0, locked: 0 });
  });

  it('a buy of 0.0123 BTC: the target sells the 0.01228 kept and the 0.0000077 BTC of dust stays in the account', async () => {
    const source = await bed.start('fee-dust', { args: SPOT });
    await bed.control('fees', 'rate=0.001');
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.0123,tp_price=52000');
    const outcome = await bed.outcome(entry);
    expect(outcome).toMatchObject({ status: 'executed' });
    expect(outcome.message).toContain('opened buy 0.01228 BTC/USDT');
    expect(outcome.message).toContain('the 0.0000077 BTC left below one lot step stays in the account');
    expect(held().openOrders).toEqual([
      expect.objectContaining({ type: 'LIMIT', side: 'SELL', origQty: 0.01228, price: 52000 }),
    ]);
    await waitUntil(
      async () => JSON.stringify(await positionsOf(source.published)) === '[0.01228]',
      'the position of 0.01228 published',
      8000,
    );
    await reconciled();
    expect(findings(source.agent.lines())).toEqual([]);

    await bed.control('price', 'symbol=BTCUSDT&price=52000');
    await waitUntil(async () => (await positionsOf(source.published)).length === 0, 'the target filled', 10_000);
    expect(held().balances.BTC).toEqual({ free: 0.0000077, locked: 0 });
    await reconciled();
    expect(findings(source.agent.lines())).toEqual([]);
    expect((await source.published()).notManaged).toEqual([]);
  });

  it('a pending buy filled later: its fee read from the trades, its stop placed for the 0.00999 kept', async () => {
    const source = await bed.start('fee-later', { args: SPOT });
    await bed.control('fees', 'rate=0.001');
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buylimit,vol=0.01,entry_price=49500,sl_price=49000',
    );
    expect(await bed.outcome(entry)).toMatchObject({ status: 'executed' });
    await bed.control('price', 'symbol=BTCUSDT&price=49500');
    await waitUntil(
      async () => JSON.stringify(await positionsOf(source.published)) === '[0.00999]',
      'the position of 0.00999 published',
      10_000,
    );
    await waitUntil(async () => held().openOrders.length === 1, 'the stop placed', 8000);
    expect(held().openOrders).toEqual([expect.objectContaining({ type: 'STOP_LOSS', side: 'SELL', origQty: 0.00999 })]);
    expect(bed.exchange.requests('GET', '/api/v3/myTrades').length).toBeGreaterThan(0);
    await reconciled();
    expect(findings(source.agent.lines())).toEqual([]);
  });

  it('a pending buy filled while its trades cannot be read: reported once they are, never as the 0.01 filled', async () => {
    const source = await bed.start('fee-unread', { args: SPOT });
    await bed.control('fees', 'rate=0.001');
    const entry = await postSignal(
      bed.server.url,
      source.authKey,
      'BTCUSDT,buylimit,vol=0.01,entry_price=49500,sl_price=49000',
    );
    expect(await bed.outcome(entry)).toMatchObject({ status: 'executed' });
    await bed.control('fail', 'method=GET&path=/api/v3/myTrades&code=-1001&count=3');
    await bed.control('price', 'symbol=BTCUSDT&price=49500');
    await waitUntil(
      async () => bed.exchange.requests('GET', '/api/v3/myTrades').length >= 4,
      'the trades read again after 3 failures',
      15_000,
    );
    await waitUntil(async () => held().openOrders.length === 1, 'the stop placed', 8000);
    expect(held().openOrders).toEqual([expect.objectContaining({ type: 'STOP_LOSS', side: 'SELL', origQty: 0.00999 })]);
    expect(bed.exchange.requests('POST', '/api/v3/order').map((r) => r.params.quantity)).toEqual(['0.01', '0.00999']);
    await waitUntil(
      async () => JSON.stringify(await positionsOf(source.published)) === '[0.00999]',
      'the position of 0.00999 published',
      8000,
    );
    // Meanwhile the reconciliation kept the entry pending (not dropped as gone), and nothing was warned.
    await reconciled();
    expect(source.agent.lines().filter((l) => l.level >= 40)).toEqual([]);
    expect((await source.published()).notManaged).toEqual([]);
  });

  it('fees paid with BNB: the position and its stop keep the whole 0.01', async () => {
    const source = await bed.start('fee-bnb', { args: SPOT });
    await bed.control('balance', 'asset=BNB&total=1');
    await bed.control('fees', 'rate=0.001&bnb=1&bnbPrice=600');
    const entry = await postSignal(bed.server.url, source.authKey, 'BTCUSDT,buy,vol=0.01,sl_price=49000');
    const outcome = await bed.outcome(entry);
    expect(outcome).toMatchObject({ status: 'executed' });
    expect(outcome.message).toContain('opened buy 0.01 BTC/USDT');
    expect(outcome.message).not.toContain('took its fee');
    expect(held().balances.BTC).toEqual({ free: 0, locked: 0.01 });
    // 0.01 × 50000.01 × 0.001 × 0.75 / 600 BNB.
    expect(held().balances.BNB!.free).toBeCloseTo(1 - 0.00062500013, 8);
    expect(held().openOrders).toEqual([expect.objectContaining({ type: 'STOP_LOSS', origQty: 0.01 })]);
    await reconciled();
    expect(await positionsOf(source.published)).toEqual([0.01]);
    expect(findings(source.agent.lines())).toEqual([]);
  });
});
