import { describe, expect, it } from 'vitest';
import { accountWithAgents, postSignal, sourceFor, waitUntil } from '../delivery/support/delivery-setup.js';
import { BinanceUsdmExchange } from '../fakes/binance-usdm-exchange.js';
import type { TestServer } from '../support/start-test-server.js';
import { AgentProcess } from './support/agent-process.js';
import { useAgentTestBed } from './support/agent-test-bed.js';

/**
 * Each signal's timings in the signal log, through a real server and a real agent process:
 * received and handed out (the server's), decided, sent, the venue's answer and the fill (the
 * agent's, from its acknowledgement), in that order, so the dashboard can show alert → fill.
 */
describe("a signal's timings in the signal log", () => {
  const bed = useAgentTestBed();

  async function settledSignal(server: TestServer, id: string) {
    await waitUntil(
      async () =>
        ['executed', 'rejected', 'failed'].includes(
          (await server.admin('GET', `/api/admin/signals/${id}`)).body.deliveries[0].status,
        ),
      `the outcome of ${id}`,
      30_000,
    );
    return (await server.admin('GET', `/api/admin/signals/${id}`)).body;
  }

  /** received <= handed <= decided <= sent <= venue's answer <= filled <= the server took the ack. */
  function expectInOrder(signal: any): number[] {
    const delivery = signal.deliveries[0];
    expect(delivery.status).toBe('executed');
    const t = delivery.timings;
    const times = [
      signal.receivedAt,
      delivery.deliveredAt,
      t.decidedAt,
      t.sentAt,
      t.venueAckedAt,
      t.filledAt,
      delivery.ackedAt,
    ].map((time: string) => Date.parse(time));
    for (const time of times) expect(Number.isNaN(time)).toBe(false);
    expect(times).toEqual([...times].sort((a, b) => a - b));
    return times;
  }

  it('on the paper account: a market entry has all six in order; a limit entry is sent and answered, not filled', async () => {
    const { accountId, agents } = await accountWithAgents(bed.server, ['timings-paper']);
    const authKey = (await sourceFor(bed.server, accountId)).authKey;
    const agent = bed.startAgent(bed.server.url, agents[0]!.token, bed.stateDir());
    await agent.connected();

    expectInOrder(await settledSignal(bed.server, await postSignal(bed.server.url, authKey, 'EURUSD,buy,vol=0.1')));

    const limit = await settledSignal(
      bed.server,
      await postSignal(bed.server.url, authKey, 'EURUSD,buylimit,vol=0.1,entry_price=0.9'),
    );
    expect(limit.deliveries[0].timings).toMatchObject({
      decidedAt: expect.any(String),
      sentAt: expect.any(String),
      venueAckedAt: expect.any(String),
      filledAt: null,
    });
  });

  it('on the Binance USDⓈ-M test exchange: in order, and the order reached the exchange between sent and answered', async () => {
    const keys = { SIGNALGATE_CCXT_API_KEY: 'usdm-key', SIGNALGATE_CCXT_SECRET: 'usdm-secret' };
    const exchange = await BinanceUsdmExchange.start({
      apiKey: keys.SIGNALGATE_CCXT_API_KEY,
      secret: keys.SIGNALGATE_CCXT_SECRET,
    });
    let agent: AgentProcess | undefined;
    try {
      const { accountId, agents } = await accountWithAgents(bed.server, ['timings-usdm']);
      const authKey = (await sourceFor(bed.server, accountId)).authKey;
      agent = AgentProcess.startVenue(
        bed.server.url,
        agents[0]!.token,
        bed.stateDir(),
        ['--venue', 'ccxt', '--exchange', 'binanceusdm', '--proxy-url', exchange.url],
        keys,
      );
      await agent.waitForLog((l) => l.msg === 'venue ready', 'the venue ready');

      const signal = await settledSignal(bed.server, await postSignal(bed.server.url, authKey, 'BTCUSDT,buy,vol=0.01'));
      const [, , , sent, answered] = expectInOrder(signal);
      const orders = exchange.requests('POST', '/fapi/v1/order');
      expect(orders).toHaveLength(1);
      expect(orders[0]!.at).toBeGreaterThanOrEqual(sent!);
      expect(orders[0]!.at).toBeLessThanOrEqual(answered!);
    } finally {
      await agent?.kill();
      await exchange.stop();
    }
  });
});
