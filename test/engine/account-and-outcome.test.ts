import { describe, expect, it } from 'vitest';
import { applySignal, applyTick, createEngineState, type EngineState } from '../../src/engine/index.js';
import type { NormalizedSignal } from '../../src/language/index.js';
import { lots, pips, sig, simulation, tp } from './simulation.js';

describe('the summary', () => {
  it('reports balance, equity with the floating profit, positions and orders', () => {
    // EURUSD buy 1 lot at 1.10020, bid now 1.10520: +500.00
    // USDJPY sell 1 lot at 150.00, ask now 150.30: −30000 JPY / mid 150.29 = −199.61
    // equity = 10000 + 500 − 199.6141 = 10300.39
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    sim.tick('USDJPY', 150.0, 150.02);
    sim.signal(sig('EURUSD', 'buy', { volume: lots(1), sl: pips(20), comment: 'A' }));
    sim.signal(sig('USDJPY', 'sell', { volume: lots(1) }));
    sim.signal(sig('EURUSD', 'selllimit', { volume: lots(0.2), entry: pips(80), sl: pips(20) }));
    sim.tick('EURUSD', 1.1052, 1.1054);
    sim.tick('USDJPY', 150.28, 150.3);
    expect(sim.summary()).toEqual({
      type: 'summary',
      time: 7,
      balance: 10_000,
      equity: 10_300.39,
      currency: 'USD',
      positions: [
        { position: 1, symbol: 'EURUSD', side: 'buy', volume: 1, price: 1.1002, sl: 1.0982, comment: 'A' },
        { position: 2, symbol: 'USDJPY', side: 'sell', volume: 1, price: 150, sl: null, comment: null },
      ],
      orders: [
        { order: 3, symbol: 'EURUSD', side: 'sell', kind: 'limit', volume: 0.2, price: 1.108, sl: 1.11, comment: null },
      ],
    });
  });

  it('equity equals the balance when flat, and the balance moves by the realized profits only', () => {
    const sim = simulation({ balance: 2500, currency: 'GBP' });
    sim.tick('GBPUSD', 1.25, 1.2502);
    sim.tick('EURGBP', 0.85, 0.8502);
    // EURGBP is quoted in GBP: buy 1 lot at 0.85020, close at 0.85520: 0.0050 × 100000 = 500.00 GBP
    sim.signal(sig('EURGBP', 'buy', { volume: lots(1) }));
    sim.tick('EURGBP', 0.8552, 0.8554);
    sim.signal(sig('EURGBP', 'closeall'));
    expect(sim.summary()).toMatchObject({ balance: 3000, equity: 3000, currency: 'GBP', positions: [], orders: [] });
  });
});

describe('the outcome an agent acknowledges with', () => {
  it('executed, saying what was done', () => {
    const sim = simulation();
    sim.tick('EURUSD', 1.1, 1.1002);
    expect(sim.signal(sig('EURUSD', 'buy', { volume: lots(0.1) })).outcome).toEqual({
      status: 'executed',
      message: 'opened buy 0.1 EURUSD at 1.1002 (position 1)',
    });
    expect(sim.signal(sig('EURUSD', 'closeall')).outcome).toEqual({
      status: 'executed',
      message: 'closed position 1: 0.1 lots at 1.1, profit -2',
    });
  });

  it('rejected, with the reason, leaving the state as it was', () => {
    const sim = simulation();
    const before = sim.state;
    const result = applySignal(before, sig('EURUSD', 'buy'), 5, { text: 'EURUSD,buy', signalId: 'sig-1' });
    expect(result.outcome).toEqual({ status: 'rejected', message: 'there is no price for EURUSD yet' });
    expect(result.events).toEqual([
      { type: 'rejected', time: 5, signal: 'EURUSD,buy', reason: 'there is no price for EURUSD yet' },
    ]);
    expect(result.state).toBe(before);
  });

  it('keeps the signal id on what the signal opened', () => {
    const state = applyTick(createEngineState({ balance: 1000 }), {
      time: 0,
      symbol: 'EURUSD',
      bid: 1.1,
      ask: 1.1002,
    }).state;
    const result = applySignal(state, sig('EURUSD', 'buy'), 1, { signalId: 'sig-42' });
    expect(result.state.positions[0]).toMatchObject({ signalId: 'sig-42' });
  });
});

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

const script: (['tick', string, number, number] | ['signal', NormalizedSignal])[] = [
  ['tick', 'EURUSD', 1.1, 1.1002],
  [
    'signal',
    sig('EURUSD', 'buy', {
      volume: lots(1),
      sl: pips(20),
      tp: [
        { type: 'pips', value: 10, pct: 50 },
        { type: 'pips', value: 30, pct: 50 },
      ],
      trail: { trigger: 5, distance: 8, step: 1 },
      breakeven: { trigger: 4, offset: 1 },
    }),
  ],
  ['signal', sig('EURUSD', 'selllimit', { volume: lots(0.5), entry: pips(15), tp: tp(pips(10)) })],
  ['tick', 'EURUSD', 1.1008, 1.101],
  ['tick', 'EURUSD', 1.1012, 1.1014],
  ['tick', 'EURUSD', 1.1015, 1.1017],
  ['signal', sig('EURUSD', 'closeall', { close: { pct: 50 } })],
  ['tick', 'EURUSD', 1.1005, 1.1007],
  ['tick', 'EURUSD', 1.0995, 1.0997],
];

function play(state: EngineState, from: number, to: number, onState?: (s: EngineState) => EngineState) {
  const events: unknown[] = [];
  for (let i = from; i < to; i++) {
    const step = script[i]!;
    const result =
      step[0] === 'tick'
        ? applyTick(state, { time: i, symbol: step[1], bid: step[2], ask: step[3] })
        : applySignal(state, step[1], i);
    state = onState ? onState(result.state) : result.state;
    events.push(...result.events);
  }
  return { state, events };
}

describe('states', () => {
  it('are never mutated: every step works on a deeply frozen state', () => {
    const run = play(createEngineState({ balance: 10_000 }), 0, script.length, deepFreeze);
    expect(run.events.length).toBeGreaterThan(8);
  });

  it('survive a JSON round trip mid-run with identical results', () => {
    const straight = play(createEngineState({ balance: 10_000 }), 0, script.length);
    const first = play(createEngineState({ balance: 10_000 }), 0, 4);
    const reloaded = JSON.parse(JSON.stringify(first.state)) as EngineState;
    const second = play(reloaded, 4, script.length);
    expect([...first.events, ...second.events]).toEqual(straight.events);
    expect(second.state).toEqual(straight.state);
  });
});
