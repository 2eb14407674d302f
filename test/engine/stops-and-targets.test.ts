import { describe, expect, it } from 'vitest';
import { lots, pips, sig, simulation, tp } from './simulation.js';

/** A 1-lot EURUSD buy at ask 1.10020 with SL 20 pips (1.09820) and TP 40 pips (1.10420). */
function longWithStops() {
  const sim = simulation();
  sim.tick('EURUSD', 1.1, 1.1002);
  sim.signal(sig('EURUSD', 'buy', { volume: lots(1), sl: pips(20), tp: tp(pips(40)) }));
  return sim;
}

/** A 1-lot EURUSD sell at bid 1.10000 with SL 20 pips (1.10200) and TP 40 pips (1.09600). */
function shortWithStops() {
  const sim = simulation();
  sim.tick('EURUSD', 1.1, 1.1002);
  sim.signal(sig('EURUSD', 'sell', { volume: lots(1), sl: pips(20), tp: tp(pips(40)) }));
  return sim;
}

describe('a stop is reached when the closing price touches it', () => {
  it("a buy's stop, touched exactly by the bid", () => {
    const sim = longWithStops();
    expect(sim.tick('EURUSD', 1.0983, 1.0985)).toEqual([]);
    // (1.09820 − 1.10020) × 1 × 100000 = −200.00
    expect(sim.tick('EURUSD', 1.0982, 1.0984)).toEqual([
      { type: 'closed', time: 4, position: 1, volume: 1, price: 1.0982, profit: -200, reason: 'sl' },
    ]);
    expect(sim.state.balance).toBe(9800);
  });

  it("a sell's stop watches the ask, not the bid", () => {
    const sim = shortWithStops();
    // bid 1.10190 is below the stop, but a sell closes at the ask 1.10210 ≥ 1.10200 → stopped at 1.10210
    // (1.10000 − 1.10210) × 100000 = −210.00
    expect(sim.tick('EURUSD', 1.1019, 1.1021)).toEqual([
      expect.objectContaining({ type: 'closed', price: 1.1021, profit: -210, reason: 'sl' }),
    ]);
  });

  it('a gap through the stop fills at the gapped price', () => {
    const sim = longWithStops();
    // bid gaps from 1.10000 to 1.09500: (1.09500 − 1.10020) × 100000 = −520.00
    expect(sim.tick('EURUSD', 1.095, 1.0952)).toEqual([
      expect.objectContaining({ price: 1.095, profit: -520, reason: 'sl' }),
    ]);
  });

  it("a gap through a sell's stop fills at the gapped ask", () => {
    const sim = shortWithStops();
    // ask gaps to 1.10500: (1.10000 − 1.10500) × 100000 = −500.00
    expect(sim.tick('EURUSD', 1.1048, 1.105)).toEqual([
      expect.objectContaining({ price: 1.105, profit: -500, reason: 'sl' }),
    ]);
  });
});

describe('a target is reached when the closing price touches it', () => {
  it("a sell's target, touched exactly by the ask", () => {
    const sim = shortWithStops();
    expect(sim.tick('EURUSD', 1.0959, 1.0961)).toEqual([]);
    // (1.10000 − 1.09600) × 100000 = 400.00
    expect(sim.tick('EURUSD', 1.0958, 1.096)).toEqual([
      expect.objectContaining({ price: 1.096, profit: 400, reason: 'tp' }),
    ]);
  });

  it("a buy's target is watched on the bid: the ask alone does not reach it", () => {
    const sim = longWithStops();
    expect(sim.tick('EURUSD', 1.1041, 1.1043)).toEqual([]);
    // (1.10420 − 1.10020) × 100000 = 400.00
    expect(sim.tick('EURUSD', 1.1042, 1.1044)).toEqual([
      expect.objectContaining({ price: 1.1042, profit: 400, reason: 'tp' }),
    ]);
  });

  it('a gap through the target fills at the gapped price', () => {
    const sim = longWithStops();
    // bid gaps to 1.10600: (1.10600 − 1.10020) × 100000 = 580.00
    expect(sim.tick('EURUSD', 1.106, 1.1062)).toEqual([
      expect.objectContaining({ price: 1.106, profit: 580, reason: 'tp' }),
    ]);
    expect(sim.state.balance).toBe(10_580);
  });
});

describe('when one tick reaches both the stop and a target, the stop wins', () => {
  it('closes at the stop', () => {
    // On a tick feed a buy's stop sits below its targets, so only a stop moved past a target
    // (here written into the state, as a restored or hand-edited account could hold) lets one
    // closing price reach both. The rule still holds: the stop decides.
    const sim = longWithStops();
    const position = sim.state.positions[0]!;
    sim.state = { ...sim.state, positions: [{ ...position, sl: 1.1045 }] };
    // bid 1.10430: ≥ TP 1.10420 and ≤ SL 1.10450
    expect(sim.tick('EURUSD', 1.1043, 1.1045)).toEqual([
      expect.objectContaining({ type: 'closed', reason: 'sl', price: 1.1043 }),
    ]);
  });

  it('on a sell as well', () => {
    const sim = shortWithStops();
    const position = sim.state.positions[0]!;
    sim.state = { ...sim.state, positions: [{ ...position, sl: 1.0955 }] };
    // ask 1.09580: ≤ TP 1.09600 and ≥ SL 1.09550
    expect(sim.tick('EURUSD', 1.0956, 1.0958)).toEqual([expect.objectContaining({ type: 'closed', reason: 'sl' })]);
  });
});

describe('multi-level take profit', () => {
  const levels = (...spec: [number, number][]) => spec.map(([value, pct]) => ({ type: 'pips' as const, value, pct }));

  it('closes each share of the original volume, the last level the rest', () => {
    // 1 lot at 1.10020; levels 20/40/60 pips = 1.10220/1.10420/1.10620 with 33/33/34 %
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1), tp: levels([20, 33], [40, 33], [60, 34]) }));
    // 0.33 × 0.0020 × 100000 = 66.00
    expect(sim.tick('EURUSD', 1.1022, 1.1024)).toEqual([
      { type: 'partial_close', time: 3, position: 1, volume: 0.33, price: 1.1022, profit: 66 },
    ]);
    // 0.33 × 0.0040 × 100000 = 132.00
    expect(sim.tick('EURUSD', 1.1042, 1.1044)).toEqual([
      expect.objectContaining({ type: 'partial_close', volume: 0.33, profit: 132 }),
    ]);
    // the rest, 0.34 × 0.0060 × 100000 = 204.00
    expect(sim.tick('EURUSD', 1.1062, 1.1064)).toEqual([
      expect.objectContaining({ type: 'closed', volume: 0.34, profit: 204, reason: 'tp' }),
    ]);
    expect(sim.state.balance).toBe(10_402);
  });

  it('takes shares of the original volume, not of what is left', () => {
    // 0.10 lots, 33/33/34: 0.033 → 0.03, again 0.03 (33% of the remaining 0.07 would be 0.02), rest 0.04
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(0.1), tp: levels([20, 33], [40, 33], [60, 34]) }));
    sim.tick('EURUSD', 1.1022, 1.1024);
    sim.tick('EURUSD', 1.1042, 1.1044);
    sim.tick('EURUSD', 1.1062, 1.1064);
    expect(
      sim.events
        .filter((e) => e.type === 'partial_close' || e.type === 'closed')
        .map((e) => (e as { volume: number }).volume),
    ).toEqual([0.03, 0.03, 0.04]);
  });

  it('a gap through two levels fills both at the gapped price', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1), tp: levels([20, 50], [40, 50]) }));
    // bid 1.10500: 0.5 × 0.0048 × 100000 = 240.00 twice
    expect(sim.tick('EURUSD', 1.105, 1.1052)).toEqual([
      expect.objectContaining({ type: 'partial_close', volume: 0.5, price: 1.105, profit: 240 }),
      expect.objectContaining({ type: 'closed', volume: 0.5, price: 1.105, profit: 240, reason: 'tp' }),
    ]);
  });

  it('shares below 100% leave the rest open without a target', () => {
    // 1 lot, 50% at 20 pips and 25% at 40 pips: 0.25 stays open
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1), tp: levels([20, 50], [40, 25]) }));
    sim.tick('EURUSD', 1.1022, 1.1024);
    sim.tick('EURUSD', 1.1042, 1.1044);
    sim.tick('EURUSD', 1.12, 1.1202);
    expect(sim.of('partial_close').map((e) => e.volume)).toEqual([0.5, 0.25]);
    expect(sim.of('closed')).toEqual([]);
    expect(sim.summary().positions).toEqual([expect.objectContaining({ position: 1, volume: 0.25 })]);
  });

  it('a share that floors below the minimum lot closes nothing; the last level closes the rest', () => {
    // 0.01 lots, 50/50: 0.005 floors to 0 → level 1 closes nothing, level 2 closes the 0.01
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(0.01), tp: levels([20, 50], [40, 50]) }));
    expect(sim.tick('EURUSD', 1.1022, 1.1024)).toEqual([]);
    expect(sim.tick('EURUSD', 1.1042, 1.1044)).toEqual([
      expect.objectContaining({ type: 'closed', volume: 0.01, reason: 'tp' }),
    ]);
  });

  it('a share that would leave less than the minimum lot closes the whole position', () => {
    // lot minimum 0.1, step 0.01; 0.25 lots, 70/30: level 1 = 0.17 would leave 0.08 < 0.1 → closes all 0.25
    const sim = simulation({ instruments: { EURUSD: { lotMin: 0.1 } } });
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(0.25), tp: levels([20, 70], [40, 30]) }));
    expect(sim.tick('EURUSD', 1.1022, 1.1024)).toEqual([
      expect.objectContaining({ type: 'closed', volume: 0.25, reason: 'tp' }),
    ]);
  });

  it('the stop closes what a partial take profit left', () => {
    // 1 lot, SL 1.09820; 50% at 20 pips; then the stop: 0.5 × (1.09820 − 1.10020) × 100000 = −100.00
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1), sl: pips(20), tp: levels([20, 50], [40, 50]) }));
    sim.tick('EURUSD', 1.1022, 1.1024);
    expect(sim.tick('EURUSD', 1.0982, 1.0984)).toEqual([
      expect.objectContaining({ type: 'closed', volume: 0.5, profit: -100, reason: 'sl' }),
    ]);
    // +100.00 from the first half
    expect(sim.state.balance).toBe(10_000);
  });
});
