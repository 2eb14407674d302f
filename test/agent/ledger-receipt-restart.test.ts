import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import { BINANCE_USDM, useCcxtAgentBed, type CcxtAgent } from '../support/ccxt-agent-bed.js';
import { readJournal } from './support/journal-file.js';

/**
 * The quote at receipt of a signal finished after a restart: a real agent process on the Binance
 * USDⓈ-M test exchange is killed once its market order is carried out and before the answer, the
 * price moves while it is down, and the signal finished by the next run keeps the quote it was
 * first decided at (written with the signal in flight), not the one its retry read: the slippage
 * measures from where the trader's signal met the market.
 */
describe('the quote at receipt through a restart', () => {
  const bed = useCcxtAgentBed(BINANCE_USDM);

  const journal = (agent: CcxtAgent) => {
    const agentDir = path.join(agent.dir, 'agents', readdirSync(path.join(agent.dir, 'agents'))[0]!);
    const file = readdirSync(agentDir).find((f) => f.startsWith('venue-') && f.endsWith('.json'))!;
    return readJournal(path.join(agentDir, file));
  };

  it('a market entry killed after the exchange filled it reports the first quote after the restart', async () => {
    const agent = await bed.start('usdm-receipt');
    const exchange = bed.exchange;
    const trades = async () =>
      (await bed.server.admin('GET', `/api/admin/ledger/trades?accountId=${agent.accountId}`)).body.trades as any[];

    // Killed as the exchange carried the order out (filled at the ask 50000.1), its answer never
    // sent; the price then moves to 50100 while the agent is down.
    const killed = agent.agent;
    let done = false;
    exchange.onMoment((request, moment) => {
      if (done) return moment === 'arrived' ? 'drop' : undefined;
      if (moment !== 'carried' || request.method !== 'POST' || request.path !== '/fapi/v1/order') return undefined;
      done = true;
      process.kill(killed.child.pid!, 'SIGKILL');
      exchange.setPrice('BTCUSDT', 50100);
      return 'withhold';
    });
    const entry = await postSignal(bed.server.url, agent.authKey, 'BTCUSDT,buy,vol=0.01');
    await killed.exited;
    expect(done, 'killed after the order was carried out').toBe(true);
    exchange.onMoment(null);
    const stored = journal(agent);
    expect(stored.inFlight).toContain(entry);
    expect(stored.receipts[entry]).toEqual({ 'BTC/USDT:USDT': { bid: 50000, ask: 50000.1 } });

    await agent.run();
    expect(await bed.outcome(entry)).toMatchObject({ status: 'executed' });
    await waitUntil(async () => (await trades()).length === 1, 'the opening fill in the ledger', 30_000);
    // The retry read the ask 50100.1; the trade keeps 50000.1, which it filled at: no slippage.
    expect((await trades())[0]).toMatchObject({ entryPrice: 50000.1, quoteAtReceipt: 50000.1, openingSignalId: entry });
    const stats = (await bed.server.admin('GET', `/api/admin/ledger/statistics?accountId=${agent.accountId}`)).body;
    expect(stats.latencyBySource[0].slippage).toEqual({ count: 1, median: 0, p95: 0 });
    // Settled: the journal no longer keeps it.
    await waitUntil(async () => journal(agent).receipts === undefined, 'the receipt dropped once settled', 15_000);
  });
});
