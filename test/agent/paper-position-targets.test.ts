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
 * The strategy message the dashboard hands out, `{{ticker}},position{{strategy.market_position}},…`,
 * as TradingView renders it for a strategy that goes long, flat, short, long and flat, sent to a
 * real server (with the duplicate guard the TradingView page recommends) and executed by a real
 * paper agent process: after each step the account holds exactly what the strategy holds. The
 * paper account holds each position apart (hedged; it has no one-way mode), which is where a
 * buy/sell message went wrong: the exit opened a second position beside the first.
 */
describe('a paper agent given position targets', () => {
  const bed = useAgentTestBed();

  it('holds what the strategy holds after each of long → flat → short → long → flat', async () => {
    const { accountId, agents } = await accountWithAgents(bed.server, ['paper-targets']);
    const { authKey } = await sourceFor(bed.server, accountId, { duplicateWindowSeconds: 10 });
    const dir = bed.stateDir();
    const ticks = path.join(dir, 'ticks.csv');
    writeFileSync(ticks, 'time,symbol,bid,ask\n2024-03-01T09:30:00Z,EURUSD,1.10500,1.10520\n');
    const agent = bed.startAgent(bed.server.url, agents[0]!.token, dir, ['--ticks', ticks]);
    await agent.connected();
    const state = async () => (await bed.server.admin('GET', `/api/admin/agents/${agents[0]!.id}`)).body.state;
    const held = async () => {
      const s = await state();
      return {
        positions: (s?.positions ?? []).map((p: { side: string; volume: number }) => `${p.side} ${p.volume}`),
        orders: s?.orders ?? [],
      };
    };

    const steps: [string, string[]][] = [
      ['long', ['buy 0.1']],
      ['flat', []],
      ['short', ['sell 0.1']],
      ['long', ['buy 0.1']],
      ['flat', []],
    ];
    for (const [marketPosition, positions] of steps) {
      const id = await postSignal(
        bed.server.url,
        authKey,
        `EURUSD,position${marketPosition},vol=0.1,sl_pips=20,tp_pips=40`,
      );
      await waitUntil(
        async () => !['queued', 'delivered'].includes((await deliveriesOf(bed.server, id))[0].status),
        `the ack of ${marketPosition}`,
      );
      expect((await deliveriesOf(bed.server, id))[0].status, marketPosition).toBe('executed');
      await waitUntil(
        async () => JSON.stringify((await held()).positions) === JSON.stringify(positions),
        `the account to hold ${positions.join(', ') || 'nothing'} after ${marketPosition}`,
      );
      expect(await held()).toEqual({ positions, orders: [] });
    }
  });
});
