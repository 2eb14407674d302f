import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  settledDeliveriesOf,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { useAgentTestBed } from './support/agent-test-bed.js';

describe('what a paper agent reports', () => {
  const bed = useAgentTestBed();

  it('acknowledges executed and rejected signals with the engine outcome and publishes the account', async () => {
    const { server } = bed;
    const dir = bed.stateDir();
    const { accountId, agents } = await accountWithAgents(server, ['paper']);
    const agent = agents[0]!;
    const source = await sourceFor(server, accountId);
    // One quote, so the fill price is known: buys fill at its ask.
    const ticks = path.join(dir, 'ticks.csv');
    writeFileSync(ticks, 'time,symbol,bid,ask\n2024-03-01T09:30:00Z,EURUSD,1.10000,1.10020\n');
    const agentProcess = bed.startAgent(server.url, agent.token, dir, [
      '--ticks',
      ticks,
      '--balance',
      '5000',
      '--currency',
      'usd',
    ]);
    await agentProcess.connected();
    const bought = await postSignal(server.url, source.authKey, 'EURUSD,buy,vol=0.2,sl_pips=20,comment=swing');
    const refused = await postSignal(server.url, source.authKey, 'EURUSD,closesell');
    const unknown = await postSignal(server.url, source.authKey, 'GBPUSD,buy');
    await settledDeliveriesOf(server, unknown, 'the acks');

    expect((await deliveriesOf(server, bought))[0]).toMatchObject({
      status: 'executed',
      message: 'opened buy 0.2 EURUSD at 1.1002 (position 1)',
      result: {
        events: [
          {
            type: 'opened',
            position: 1,
            symbol: 'EURUSD',
            side: 'buy',
            volume: 0.2,
            price: 1.1002,
            sl: 1.0982,
            comment: 'swing',
          },
        ],
      },
    });
    expect((await deliveriesOf(server, refused))[0]).toMatchObject({
      status: 'rejected',
      message: 'there are no open sell positions on EURUSD to close',
    });
    expect((await deliveriesOf(server, unknown))[0]).toMatchObject({
      status: 'rejected',
      message: `GBPUSD is not in the paper feed: the ticks file ${ticks} prices only EURUSD; send one of those, or give --ticks a file with prices for it`,
    });

    await waitUntil(
      async () => (await server.admin('GET', `/api/admin/agents/${agent.id}`)).body.state?.positions?.length === 1,
      'the published state',
    );
    const view = (await server.admin('GET', `/api/admin/agents/${agent.id}`)).body;
    expect(view.lastSeenAt).not.toBeNull();
    expect(view.state).toMatchObject({
      balance: 5000,
      currency: 'USD',
      positions: [
        { position: 1, symbol: 'EURUSD', side: 'buy', volume: 0.2, price: 1.1002, sl: 1.0982, comment: 'swing' },
      ],
      orders: [],
    });
    // Marked to the bid: 0.2 lots × 100,000 × (1.1000 − 1.1002).
    expect(view.state.equity).toBeCloseTo(4996, 6);
    expect((await agentProcess.stop()).code).toBe(0);
  });

  it('says which instruments the random walk prices when a signal names one it never prices', async () => {
    const { server } = bed;
    const { accountId, agents } = await accountWithAgents(server, ['walk']);
    const source = await sourceFor(server, accountId);
    const agentProcess = bed.startAgent(server.url, agents[0]!.token, bed.stateDir(), ['--seed', '1']);
    await agentProcess.connected();
    const index = await postSignal(server.url, source.authKey, 'SPX500,buy');
    const cross = await postSignal(server.url, source.authKey, 'GBPAUD,sell');
    const quoted = await postSignal(server.url, source.authKey, 'US500,buy');
    await waitUntil(async () => (await deliveriesOf(server, quoted))[0].status === 'executed', 'the acks');
    const feed =
      'the built-in random walk prices only AUDJPY, AUDUSD, BTCUSD, ETHUSD, EURCHF, EURGBP, EURJPY, EURUSD, GBPJPY, GBPUSD, GER40, JP225, NAS100, NZDUSD, ' +
      'UK100, US30, US500, USDCAD, USDCHF, USDJPY, XAGUSD, XAUUSD; send one of those, or give --ticks a file with prices for it';
    expect((await deliveriesOf(server, index))[0]).toMatchObject({
      status: 'rejected',
      message: `SPX500 is not in the paper feed: ${feed}`,
    });
    expect((await deliveriesOf(server, cross))[0]).toMatchObject({
      status: 'rejected',
      message: `GBPAUD is not in the paper feed: ${feed}`,
    });
  });
});
