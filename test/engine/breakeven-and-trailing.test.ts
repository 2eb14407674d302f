import { describe, expect, it } from 'vitest';
import { lots, pips, price, sig, simulation } from './simulation.js';

describe('breakeven', () => {
  it('moves the stop to entry + offset once profit reaches the trigger, exactly', () => {
    // buy at 1.10020, SL 1.09820; trigger 10 pips, offset 2 → SL 1.10040 when bid ≥ 1.10120
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1), sl: pips(20), breakeven: { trigger: 10, offset: 2 } }));
    expect(sim.tick('EURUSD', 1.1011, 1.1013)).toEqual([]); // 9 pips
    expect(sim.tick('EURUSD', 1.1012, 1.1014)).toEqual([
      { type: 'sl_moved', time: 4, position: 1, sl: 1.1004, reason: 'breakeven' },
    ]);
    // back down to the new stop: (1.10040 − 1.10020) × 100000 = 20.00
    expect(sim.tick('EURUSD', 1.1004, 1.1006)).toEqual([
      expect.objectContaining({ type: 'closed', price: 1.1004, profit: 20, reason: 'sl' }),
    ]);
  });

  it('acts once', () => {
    // sell at 1.10000 without a stop; trigger 15, offset 0 → SL 1.10000 when ask ≤ 1.09850
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'sell', { volume: lots(1), breakeven: { trigger: 15, offset: 0 } }));
    sim.tick('EURUSD', 1.0983, 1.0985);
    sim.tick('EURUSD', 1.0988, 1.099);
    sim.tick('EURUSD', 1.097, 1.0972);
    expect(sim.of('sl_moved')).toEqual([expect.objectContaining({ sl: 1.1, reason: 'breakeven' })]);
    expect(sim.summary().positions[0]).toMatchObject({ sl: 1.1 });
  });

  it('never moves a stop that is already past breakeven back', () => {
    // buy at 1.10020; trailing 5 pips from the start; breakeven trigger 20, offset 0
    // bid 1.10120 → trail SL 1.10070; bid 1.10220 (20 pips) → breakeven target 1.10020 is behind
    // the stop, so it does not move; trailing then takes it to 1.10170
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(
      sig('EURUSD', 'buy', {
        volume: lots(1),
        breakeven: { trigger: 20, offset: 0 },
        trail: { trigger: 0, distance: 5, step: 0 },
      }),
    );
    sim.tick('EURUSD', 1.1012, 1.1014);
    sim.tick('EURUSD', 1.1022, 1.1024);
    expect(sim.of('sl_moved').map((e) => [e.sl, e.reason])).toEqual([
      [1.1007, 'trailing'],
      [1.1017, 'trailing'],
    ]);
  });

  it('waits while the locked-in offset would be beyond the price', () => {
    // buy at 1.10020; trigger 5 pips, offset 8 pips (1.10100): at bid 1.10070 the stop would sit
    // above the bid, so it waits; at bid 1.10110 it moves
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1), breakeven: { trigger: 5, offset: 8 } }));
    expect(sim.tick('EURUSD', 1.1007, 1.1009)).toEqual([]);
    expect(sim.tick('EURUSD', 1.1011, 1.1013)).toEqual([expect.objectContaining({ type: 'sl_moved', sl: 1.101 })]);
  });
});

describe('trailing stop', () => {
  it('starts at the trigger, follows at the distance, moves only by at least the step and never back', () => {
    // buy at 1.10020 (no SL); trigger 10, distance 10, step 5
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1), trail: { trigger: 10, distance: 10, step: 5 } }));
    expect(sim.tick('EURUSD', 1.1011, 1.1013)).toEqual([]); // 9 pips: not triggered
    expect(sim.tick('EURUSD', 1.1012, 1.1014)).toEqual([
      { type: 'sl_moved', time: 4, position: 1, sl: 1.1002, reason: 'trailing' }, // 10 pips: SL = 1.10120 − 10 pips
    ]);
    expect(sim.tick('EURUSD', 1.1016, 1.1018)).toEqual([]); // would move 4 pips: step of 5 not reached
    expect(sim.tick('EURUSD', 1.1017, 1.1019)).toEqual([expect.objectContaining({ sl: 1.1007 })]); // exactly 5 pips
    expect(sim.tick('EURUSD', 1.101, 1.1012)).toEqual([]); // candidate 1.10000 is backward
    // stopped at 1.10070: (1.10070 − 1.10020) × 100000 = 50.00
    expect(sim.tick('EURUSD', 1.1007, 1.1009)).toEqual([
      expect.objectContaining({ type: 'closed', profit: 50, reason: 'sl' }),
    ]);
  });

  it('trails a sell on the ask', () => {
    // sell at 1.10000, SL 1.10200; trigger 0, distance 15, step 0
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'sell', { volume: lots(1), sl: pips(20), trail: { trigger: 0, distance: 15, step: 0 } }));
    expect(sim.tick('EURUSD', 1.0993, 1.0995)).toEqual([expect.objectContaining({ sl: 1.101 })]); // 1.09950 + 15 pips
    expect(sim.tick('EURUSD', 1.0988, 1.099)).toEqual([expect.objectContaining({ sl: 1.1005 })]);
    expect(sim.tick('EURUSD', 1.0998, 1.1)).toEqual([]); // candidate 1.10150 is backward
    // (1.10000 − 1.10050) × 100000 = −50.00
    expect(sim.tick('EURUSD', 1.1003, 1.1005)).toEqual([
      expect.objectContaining({ type: 'closed', price: 1.1005, profit: -50 }),
    ]);
  });

  it('does not loosen a tighter initial stop', () => {
    // buy at 1.10020, SL at 1.09950; distance 20: at bid 1.10100 the trail would be 1.09900, behind the stop
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(
      sig('EURUSD', 'buy', { volume: lots(1), sl: price(1.0995), trail: { trigger: 0, distance: 20, step: 0 } }),
    );
    expect(sim.tick('EURUSD', 1.101, 1.1012)).toEqual([]);
    expect(sim.tick('EURUSD', 1.1016, 1.1018)).toEqual([expect.objectContaining({ sl: 1.0996 })]);
  });

  it('on gold, pips are 0.1', () => {
    // buy XAUUSD at 2000.50; trigger 20 pips (2.0), distance 15 pips (1.5): bid 2002.50 → SL 2001.00
    const sim = simulation();
    sim.tick('XAUUSD', 2000, 2000.5);
    sim.signal(sig('XAUUSD', 'buy', { volume: lots(1), trail: { trigger: 20, distance: 15, step: 0 } }));
    expect(sim.tick('XAUUSD', 2002.4, 2002.9)).toEqual([]);
    expect(sim.tick('XAUUSD', 2002.5, 2003)).toEqual([expect.objectContaining({ sl: 2001 })]);
  });
});
