import { describe, expect, it } from 'vitest';
import { postSignal } from '../delivery/support/delivery-setup.js';
import { useCTraderBed } from './support/ctrader-bed.js';

/**
 * The strategy message's position targets on a hedged FIX broker (cTrader-style, a real agent
 * process): long, flat, short, long, flat. After each, the broker holds exactly the strategy's
 * position, with the stop and target of the one open and no order left from the ones closed.
 */
describe('position targets on a cTrader-style FIX 4.4 broker', () => {
  const bed = useCTraderBed();

  it('long → flat → short → long → long → flat: the broker holds what the strategy holds after each', async () => {
    await bed.startReady();
    const steps: [string, string[]][] = [
      ['long', ['buy 10000']],
      ['flat', []],
      ['short', ['sell 10000']],
      ['long', ['buy 10000']],
      ['long', ['buy 10000']],
      ['flat', []],
    ];
    for (const [target, held] of steps) {
      const signal = await postSignal(
        bed.server.url,
        bed.authKey,
        `EURUSD,position${target},vol=0.1,sl_pips=20,tp_pips=40`,
      );
      const delivery = await bed.settled(signal);
      expect(delivery.status, `${target}: ${delivery.message}`).toBe('executed');
      expect(
        [...bed.broker.positions.values()].map((p) => `${p.side} ${p.units}`),
        target,
      ).toEqual(held);
      // Each open position has its stop and target at the broker; nothing else rests.
      expect([...bed.broker.resting.values()].map((o) => o.kind).sort(), target).toEqual(
        held.length === 0 ? [] : ['limit', 'stop'],
      );
    }
  });
});
