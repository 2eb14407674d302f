import { describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { BINANCE_USDM, useCcxtAgentBed } from '../support/ccxt-agent-bed.js';
import { AgentProcess } from './support/agent-process.js';

/**
 * Signals of different symbols of one account are carried out side by side, each symbol's in
 * order: a real agent process on the Binance USDⓈ-M test exchange, whose answer to one order is
 * held back, and a paper agent with a basket posted at once.
 */
const ORDER = '/fapi/v1/order';

describe('one lane per symbol', () => {
  const bed = useCcxtAgentBed(BINANCE_USDM);
  const server = () => bed.server;

  const statusOf = async (id: string) => (await deliveriesOf(server(), id))[0].status as string;
  const settled = (id: string) =>
    waitUntil(
      async () => ['executed', 'rejected', 'failed'].includes(await statusOf(id)),
      `the outcome of ${id}`,
      30_000,
    );

  it("another symbol's order reaches the exchange and is executed while one symbol's order waits for its answer; that symbol's next signal waits", async () => {
    const source = await bed.start('lanes-usdm');
    const fake = bed.exchange;

    // The exchange carries out the first order at once and answers it 8 s later (CCXT waits 10 s).
    const res = await fetch(`${fake.url}_control/hold?method=POST&path=${ORDER}&seconds=8&count=1`, { method: 'POST' });
    expect(res.status).toBe(200);
    const btc = await postSignal(server().url, source.authKey, 'BTCUSDT,buy,vol=0.01');
    await waitUntil(() => fake.requests('POST', ORDER).length === 1, 'the BTCUSDT order sent', 15_000);
    const [btcAgain, eth] = await Promise.all([
      postSignal(server().url, source.authKey, 'BTCUSDT,closebuy'),
      postSignal(server().url, source.authKey, 'ETHUSDT,buy,vol=0.01'),
    ]);

    // ETHUSDT does not wait for BTCUSDT's answer: its order reaches the exchange, and it is
    // executed, before that answer leaves (serial, it could only be sent after it).
    await settled(eth);
    const executedAt = Date.now();
    expect(await statusOf(eth)).toBe('executed');
    const btcSent = fake.requests('POST', ORDER).find((r) => r.params.symbol === 'BTCUSDT')!;
    const ethSent = fake.requests('POST', ORDER).find((r) => r.params.symbol === 'ETHUSDT')!;
    expect(executedAt).toBeLessThan(btcSent.at + 8000);
    expect(ethSent.at).toBeGreaterThan(btcSent.at);

    // BTCUSDT's close waits for its buy: sent only after the buy's answer, and closes what it opened.
    await settled(btcAgain);
    expect(await statusOf(btc)).toBe('executed');
    expect(await statusOf(btcAgain)).toBe('executed');
    const orders = fake.requests('POST', ORDER).filter((r) => r.params.symbol === 'BTCUSDT');
    expect(orders.map((r) => r.params.side)).toEqual(['BUY', 'SELL']);
    expect(orders[1]!.at).toBeGreaterThanOrEqual(orders[0]!.at + 8000);
    expect((fake.state() as { positions: { symbol: string; amount: number }[] }).positions).toMatchObject([
      { symbol: 'ETHUSDT', amount: 0.01 },
    ]);
  }, 60_000);

  it('a paper basket posted at once: every symbol executed, each symbol in its order, tickets unique', async () => {
    const {
      accountId,
      agents: [testAgent],
    } = await accountWithAgents(server(), ['lanes-paper']);
    const source = await sourceFor(server(), accountId);
    const dir = bed.tempDir('signalgate-lanes-');
    const agent = bed.own(
      AgentProcess.start(server().url, testAgent!.token, dir, ['--transport', 'websocket', '--seed', '1']),
    );
    await agent.connected('websocket');
    const symbols = ['EURUSD', 'GBPUSD', 'USDJPY', 'AUDUSD', 'NZDUSD', 'EURGBP', 'XAUUSD', 'BTCUSD'];
    // Per symbol: open, close, open again; a close carried out before its open would be rejected.
    const texts = [0, 1, 2].flatMap((round) =>
      symbols.map((s) => (round === 1 ? `${s},closebuy` : `${s},buy,vol=0.01`)),
    );
    const ids = await Promise.all(texts.map((text) => postSignal(server().url, source.authKey, text)));
    await agent.waitForHandled(ids.length);
    const handled = agent.handled();
    expect(handled.filter((l) => l.status !== 'executed')).toEqual([]);
    for (const symbol of symbols) {
      const mine = handled.filter((l) => l.symbol === symbol).map((l) => l.seq as number);
      expect(mine).toEqual([...mine].sort((a, b) => a - b));
    }
    type Published = { positions?: { symbol: string; position: number }[] } | undefined;
    const published = async () =>
      (await server().admin('GET', `/api/admin/agents/${testAgent!.id}`)).body.state as Published;
    await waitUntil(
      async () => (await published())?.positions?.length === symbols.length,
      'the basket published',
      15_000,
    );
    const positions = (await published())!.positions!;
    expect(positions.map((p) => p.symbol).sort()).toEqual([...symbols].sort());
    expect(new Set(positions.map((p) => p.position)).size).toBe(symbols.length);
  }, 60_000);
});
