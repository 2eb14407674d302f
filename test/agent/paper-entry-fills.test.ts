import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  accountWithAgents,
  deliveriesOf,
  postSignal,
  sourceFor,
  waitUntil,
} from '../delivery/support/delivery-setup.js';
import { useAgentTestBed } from './support/agent-test-bed.js';

/**
 * On the paper account the engine is the market: a pending entry fills at the first tick of the
 * feed that reaches it, without anyone reporting it (unlike a real venue, where only the venue's
 * fill makes the position).
 */
describe('a paper agent', () => {
  const bed = useAgentTestBed();

  it("fills a pending entry at the tick that reaches it, and the position keeps the order's stop", async () => {
    const { accountId, agents } = await accountWithAgents(bed.server, ['paper-entries']);
    const authKey = (await sourceFor(bed.server, accountId)).authKey;
    const dir = bed.stateDir();
    const ticks = path.join(dir, 'ticks.csv');
    // The second tick, 10 s into the file, has the ask at 1.1039: below the buy limit's 1.104.
    writeFileSync(
      ticks,
      'time,symbol,bid,ask\n2024-03-01T09:30:00Z,EURUSD,1.10500,1.10520\n2024-03-01T09:30:10Z,EURUSD,1.10370,1.10390\n',
    );
    const agent = bed.startAgent(bed.server.url, agents[0]!.token, dir, ['--ticks', ticks]);
    await agent.connected();
    const state = async () => (await bed.server.admin('GET', `/api/admin/agents/${agents[0]!.id}`)).body.state;

    const signal = await postSignal(bed.server.url, authKey, 'EURUSD,buylimit,vol=0.1,entry_price=1.104,sl_pips=30');
    await waitUntil(
      async () => (await deliveriesOf(bed.server, signal))[0].status === 'executed',
      'the ack of the buy limit',
    );
    expect((await deliveriesOf(bed.server, signal))[0].message).toMatch(/^placed buy limit 0.1 EURUSD at 1.104/);
    expect((await state())?.positions ?? []).toEqual([]);

    await agent.waitForLog(
      (l) => l.msg === 'the ticks file is played out; prices stay where they are',
      'the second tick',
      30_000,
    );
    await waitUntil(
      async () => ((s) => s?.positions?.length === 1 && s?.orders?.length === 0)(await state()),
      'the filled order as a position in the published state',
    );
    expect((await state()).positions[0]).toMatchObject({ side: 'buy', volume: 0.1, price: 1.1039, sl: 1.101 });
  });
});
