import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { STATE_SPACING_MS } from '../../src/agent/agent-client.js';
import { accountWithAgents, postSignal, sourceFor } from '../delivery/support/delivery-setup.js';
import { useAgentTestBed } from './support/agent-test-bed.js';

/**
 * A paper agent taking signals one after another publishes its account at most once per
 * STATE_SPACING_MS, the latest when the interval ends: the server stores a snapshot a few times
 * a second rather than one per signal, and the last one holds every signal's position.
 */
describe("an agent's published account under a stream of signals", () => {
  const bed = useAgentTestBed();

  /**
   * A paper agent named `name` in an account of its own with a source, priced by a one-tick file:
   * `start` runs it, `stored` reads the snapshot the server holds of it.
   */
  async function pricedAgent(name: string) {
    const { accountId, agents } = await accountWithAgents(bed.server, [name]);
    const { authKey } = await sourceFor(bed.server, accountId);
    const agent = agents[0]!;
    const dir = bed.stateDir();
    const ticks = path.join(dir, 'ticks.csv');
    writeFileSync(ticks, 'time,symbol,bid,ask\n2024-03-01T09:30:00Z,EURUSD,1.10500,1.10520\n');
    return {
      authKey,
      start: () => bed.startAgent(bed.server.url, agent.token, dir, ['--ticks', ticks]),
      stored: async () =>
        (await bed.server.admin('GET', `/api/admin/agents/${agent.id}`)).body.state as {
          updatedAt: string;
          positions: Array<{ symbol: string; volume: number }>;
        } | null,
    };
  }

  it('is stored at most once per interval, and the last snapshot holds every position', async () => {
    const { authKey, start, stored } = await pricedAgent('spacing');
    const agent = start();
    await agent.connected();

    const SIGNALS = 30;
    const posting = (async () => {
      for (let i = 0; i < SIGNALS; i++) {
        await postSignal(bed.server.url, authKey, 'EURUSD,buy,vol=0.01');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    // Every snapshot the server stores, as often as it can be read, until one holds every position.
    const seen: { at: number; positions: number }[] = [];
    const deadline = Date.now() + 20_000;
    for (;;) {
      const state = await stored();
      const at = state === null ? null : Date.parse(state.updatedAt);
      if (state !== null && at !== seen.at(-1)?.at) seen.push({ at: at!, positions: state.positions.length });
      if ((state?.positions.length ?? 0) === SIGNALS) break;
      expect(Date.now(), JSON.stringify(seen)).toBeLessThan(deadline);
    }
    await posting;

    const during = seen.filter((s) => s.positions > 0);
    expect(during.length, JSON.stringify(seen)).toBeGreaterThan(1);
    // Timers may fire a millisecond or two off the interval; one per signal would be ~20 ms apart.
    // (How many snapshots there are depends on how fast the signals came: on a loaded machine the
    // posting itself is slower; the spacing is what the agent decides.)
    for (let k = 1; k < during.length; k++) {
      expect(during[k]!.at - during[k - 1]!.at, JSON.stringify(seen)).toBeGreaterThanOrEqual(STATE_SPACING_MS - 10);
    }
  });

  it('is sent at a stop right after a signal, not dropped with the interval it was waiting for', async () => {
    const { authKey, start, stored } = await pricedAgent('stopped');
    // Queued before the start: the agent publishes its empty account as it connects and takes
    // the signal at once, so the snapshot holding the position waits for that interval to end.
    await postSignal(bed.server.url, authKey, 'EURUSD,buy,vol=0.01');
    const agent = start();
    await agent.waitForHandled(1);
    expect((await agent.stop()).code).toBe(0);
    expect((await stored())?.positions).toMatchObject([{ symbol: 'EURUSD', volume: 0.01 }]);
  });
});
