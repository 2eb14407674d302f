import { beforeAll, describe, expect, it } from 'vitest';
import { clientOrderId } from '../../src/agent/client-order-id.js';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import type { AgentProcess } from './support/agent-process.js';
import { useFix44Bed } from './support/fix44-bed.js';

/**
 * Each symbol is managed on its own: one whose quote the broker refuses (a plain FIX 4.4 broker
 * answering its MarketDataRequest with 35=Y) is logged, once, and published as failing, while
 * the others' stops still move at their quotes.
 */
describe('management of several symbols at a plain FIX 4.4 broker', () => {
  const bed = useFix44Bed({ prices: { GBPUSD: { bid: 1.27, ask: 1.2702 } } });
  let agent: AgentProcess;

  beforeAll(async () => {
    agent = await bed.startReady();
  }, 60_000);

  it("a symbol whose quote is refused does not keep another symbol's stop from moving to breakeven", async () => {
    const gbp = await postSignal(bed.server.url, bed.authKey, 'GBPUSD,buy,vol=0.1,sl_pips=20');
    await bed.settled(gbp);
    const eur = await postSignal(bed.server.url, bed.authKey, 'EURUSD,buy,vol=0.1,sl_pips=20,be_trigger=10');
    expect((await bed.settled(eur)).result.events[0]).toMatchObject({ type: 'opened', price: 1.1052 });
    // Away, the agent misses nothing it must learn from the broker; back, EURUSD is 18 pips up,
    // past its breakeven trigger, and the broker refuses GBPUSD's quotes (listed first in the book).
    await agent.kill();
    bed.broker.options.prices.EURUSD = { bid: 1.107, ask: 1.1072 };
    delete bed.broker.options.prices.GBPUSD;
    agent = await bed.startReady();
    await waitUntil(
      async () =>
        ((await bed.state())?.positions ?? []).some(
          (p: { symbol: string; sl: number }) => p.symbol === 'EURUSD' && p.sl === 1.1052,
        ),
      "EURUSD's stop at breakeven in the published state",
      30_000,
    );
    const stops = (signal: string) =>
      bed.broker
        .working()
        .filter((o) => o.clOrdId.startsWith(clientOrderId(signal, 'o').slice(0, 18)) && o.ordType === '3')
        .map((o) => o.price);
    await waitUntil(
      () => stops(eur).length === 1 && stops(eur)[0] === 1.1052,
      "EURUSD's one stop at the broker at breakeven",
    );
    expect(stops(gbp)).toEqual([1.2682]);
    const state = await bed.state();
    expect(state.failingSymbols).toEqual([
      {
        symbol: 'GBPUSD',
        error: expect.stringContaining('GBPUSD'),
        since: expect.any(String),
        failures: expect.any(Number),
      },
    ]);
    // Passes every 2 s: the same failure is logged once, not at each pass.
    await waitUntil(
      async () => (await bed.state())?.failingSymbols?.[0]?.failures >= 3,
      'three failed passes of GBPUSD',
    );
    expect(
      agent.lines().filter((l) => l.msg.startsWith('managing the symbol failed') && l.symbol === 'GBPUSD'),
    ).toHaveLength(1);
    expect(agent.lines().some((l) => l.msg.startsWith('managing the positions failed'))).toBe(false);
  });
});
