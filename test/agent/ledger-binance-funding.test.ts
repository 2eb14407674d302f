import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { postSignal, waitUntil } from '../delivery/support/delivery-setup.js';
import { BINANCE_KEYS, BINANCE_USDM, useCcxtAgentBed, type CcxtAgent } from '../support/ccxt-agent-bed.js';
import { AgentProcess } from './support/agent-process.js';
import { readJournal } from './support/journal-file.js';

/**
 * Funding payments through a real agent process on the Binance USDⓈ-M test exchange: the exchange
 * books funding on the open position when the test asks (its income history, as Binance answers
 * `GET /fapi/v1/income`), the agent reads it in the background and reports it, and the server's
 * trade carries it, its realized profit net of fees and funding. The agent is killed between the
 * exchange's answer and its journal, and started again twice: no payment is lost or counted twice.
 */
describe('funding payments from the Binance USDⓈ-M test exchange in the ledger', () => {
  const bed = useCcxtAgentBed(BINANCE_USDM);

  const journal = (agent: CcxtAgent) => {
    const agentDir = path.join(agent.dir, 'agents', readdirSync(path.join(agent.dir, 'agents'))[0]!);
    const file = readdirSync(agentDir).find((f) => f.startsWith('venue-') && f.endsWith('.json'))!;
    return readJournal(path.join(agentDir, file));
  };

  it('funding booked on an open long is in its trade, through a kill before the journal and two restarts', async () => {
    const agent = await bed.start('usdm-funding', { args: ['--funding-every', '1'] });
    const exchange = bed.exchange;
    const trades = async () =>
      (await bed.server.admin('GET', `/api/admin/ledger/trades?accountId=${agent.accountId}`)).body.trades as any[];
    const firstCursor = journal(agent).ledger.fundingFrom.at as number;
    await bed.control('fees', 'maker=0.0002&taker=0.0005');

    const entry = await postSignal(bed.server.url, agent.authKey, 'BTCUSDT,buy,vol=0.01,comment=carry');
    expect(await bed.outcome(entry)).toMatchObject({ status: 'executed' });
    await waitUntil(async () => (await trades()).length === 1, 'the opening fill in the ledger', 30_000);

    // A long of 0.01 BTC at the mark price 50000, funding rate +0.01 %: it pays
    // 0.01 × 50000 × 0.0001 = 0.05 USDT.
    const first = exchange.applyFunding('BTCUSDT', 0.0001)!;
    expect(first.income).toBe('-0.05000000');
    expect(first.time).toBeGreaterThanOrEqual(firstCursor);
    await waitUntil(async () => (await trades())[0]?.funding === -0.05, 'the first payment in the trade', 30_000);
    await waitUntil(
      async () => journal(agent).ledger.fundingFrom.at === first.time,
      'the read moved on past the first payment',
      15_000,
    );

    // The second payment is read, and the agent killed before its journal takes it: the next run
    // reads it again from the last payment it recorded. The kill lands as the exchange has the
    // answer ready, before sending it: killed once the answer had left, a busy test worker ran
    // the hook late enough for the agent to read the answer and write its journal first (seen).
    const killed = agent.agent;
    exchange.setPrice('BTCUSDT', 51000);
    // Rate −0.02 % at the mark price 51000: the long receives 0.01 × 51000 × 0.0002 = 0.102 USDT.
    const second = exchange.applyFunding('BTCUSDT', -0.0002)!;
    expect(second.income).toBe('0.10200000');
    // Requests from here on arrive after the payment was booked: their answers hold it.
    const booked = exchange.received.length;
    let answered = false;
    exchange.onMoment((request, moment) => {
      if (answered || moment !== 'carried' || request.path !== '/fapi/v1/income') return;
      if (exchange.received.indexOf(request) < booked) return;
      answered = true;
      process.kill(killed.child.pid!, 'SIGKILL');
    });
    await killed.exited;
    exchange.onMoment(null);
    expect(answered, 'killed with the answer holding the second payment ready').toBe(true);
    const stored = journal(agent).ledger;
    expect(stored.fundingFrom).toEqual({ at: first.time, ids: [expect.stringMatching(/^\d+:BTCUSDT:\d+$/)] });
    expect(stored.funding.map((p: any) => p.amount)).not.toContain(0.102);

    const readsBefore = exchange.requests('GET', '/fapi/v1/income').length;
    await agent.run();
    // −0.05 + 0.102 = 0.052 USDT: each payment once.
    await waitUntil(async () => (await trades())[0]?.funding === 0.052, 'the second payment in the trade', 30_000);
    // Read from the last payment the journal recorded, that one included (Binance's startTime is inclusive).
    expect(Number(exchange.requests('GET', '/fapi/v1/income')[readsBefore]!.params.startTime)).toBe(first.time);
    expect(exchange.requests('GET', '/fapi/v1/income')[readsBefore]!.params.incomeType).toBe('FUNDING_FEE');

    // Started again: both payments are answered again from the cursor's time or before; none counts twice.
    await waitUntil(
      async () => journal(agent).ledger.fundingFrom.at === second.time,
      'the cursor at the second payment',
      15_000,
    );
    await agent.agent.stop();
    const readsThen = exchange.requests('GET', '/fapi/v1/income').length;
    await agent.run();
    await waitUntil(
      async () => exchange.requests('GET', '/fapi/v1/income').length >= readsThen + 2,
      'two reads after the restart',
      15_000,
    );
    expect(Number(exchange.requests('GET', '/fapi/v1/income')[readsThen]!.params.startTime)).toBe(second.time);
    expect((await trades())[0].funding).toBe(0.052);

    const exit = await postSignal(bed.server.url, agent.authKey, 'BTCUSDT,closebuy');
    expect(await bed.outcome(exit)).toMatchObject({ status: 'executed' });
    await waitUntil(async () => (await trades())[0]?.exitAt !== null, 'the closed trade in the ledger', 30_000);
    // Bought 0.01 at the ask 50000.1 (fee × 0.0005: 0.2500005), sold at the bid 51000 (fee
    // 0.255); the profit (51000 − 50000.1) × 0.01 = 9.999, booked by the engine to the cent:
    // 10.00; less the fees 0.5050005, plus the funding 0.052: 9.5469995 USDT.
    expect(await trades()).toEqual([
      expect.objectContaining({
        side: 'long',
        lots: 0.01,
        entryPrice: 50000.1,
        exitPrice: 51000,
        fees: 0.5050005,
        funding: 0.052,
        realizedProfit: 9.5469995,
        openingSignalId: entry,
        closingSignalIds: [exit],
        strategy: 'carry',
      }),
    ]);
    // The account's statistics count it too.
    const stats = (await bed.server.admin('GET', `/api/admin/ledger/statistics?accountId=${agent.accountId}`)).body;
    expect(stats.statistics).toMatchObject({ funding: 0.052, netProfit: 9.5469995 });
  });

  it('--funding-every outside 1 to 3600 s, or on the paper account, is refused with exit 2 naming the flag', async () => {
    const refused = async (args: string[]) => {
      const agent = bed.own(
        AgentProcess.startVenue(
          bed.server.url,
          'sg_agent_unused',
          bed.tempDir('signalgate-funding-flag-'),
          args,
          BINANCE_KEYS,
        ),
      );
      expect((await agent.exited).code).toBe(2);
      return agent.stderr;
    };
    expect(await refused(['--venue', 'ccxt', '--exchange', 'binanceusdm', '--funding-every', '0'])).toContain(
      '--funding-every must be a number of seconds from 1 to 3600, got "0"',
    );
    expect(await refused(['--venue', 'paper', '--funding-every', '5'])).toContain(
      '--funding-every only apply to an exchange or a broker',
    );
  });
});
