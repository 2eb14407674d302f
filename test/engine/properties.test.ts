import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  applySignal,
  applyTick,
  createEngineState,
  type EngineEvent,
  type EngineState,
} from '../../src/engine/index.js';
import type { NormalizedSignal } from '../../src/language/index.js';

/**
 * Random runs: two symbols random-walking, with market and pending orders carrying stops,
 * multi-level targets, trailing and breakeven, and partial closes by share or by lots.
 */
const SYMBOLS = {
  EURUSD: { start: 1.1, pip: 0.0001, digits: 5 },
  USDJPY: { start: 150, pip: 0.01, digits: 3 },
} as const;
type Sym = keyof typeof SYMBOLS;

const symbol = fc.constantFrom<Sym>('EURUSD', 'USDJPY');

const levels = fc
  .uniqueArray(fc.integer({ min: 3, max: 80 }), { maxLength: 3 })
  .chain((distances) =>
    fc.tuple(
      fc.constant([...distances].sort((a, b) => a - b)),
      fc.array(fc.integer({ min: 1, max: 60 }), { minLength: distances.length, maxLength: distances.length }),
    ),
  )
  .map(([distances, shares]) => {
    let left = 100;
    return distances.map((value, i) => {
      const pct = i === distances.length - 1 ? left : Math.min(shares[i]!, left);
      left -= pct;
      return { type: 'pips' as const, value, pct };
    });
  });

const opening = fc.record({
  volume: fc.option(
    fc.integer({ min: 1, max: 300 }).map((n) => ({ type: 'lots' as const, value: n / 100 })),
    { nil: undefined },
  ),
  sl: fc.option(
    fc.integer({ min: 3, max: 60 }).map((value) => ({ type: 'pips' as const, value })),
    { nil: undefined },
  ),
  tp: fc.option(
    levels.filter((l) => l.length > 0),
    { nil: undefined },
  ),
  trail: fc.option(
    fc.record({
      trigger: fc.integer({ min: 0, max: 20 }),
      distance: fc.integer({ min: 1, max: 30 }),
      step: fc.integer({ min: 0, max: 10 }),
    }),
    { nil: undefined },
  ),
  breakeven: fc.option(
    fc.record({ trigger: fc.integer({ min: 1, max: 25 }), offset: fc.integer({ min: 0, max: 10 }) }),
    { nil: undefined },
  ),
});

const signal: fc.Arbitrary<NormalizedSignal> = fc.oneof(
  fc
    .record({ symbol, action: fc.constantFrom('buy', 'sell'), rest: opening })
    .map(({ symbol, action, rest }) => ({ symbol, action, ...rest })),
  fc
    .record({
      symbol,
      action: fc.constantFrom('buylimit', 'buystop', 'selllimit', 'sellstop'),
      entry: fc.integer({ min: 1, max: 40 }).map((value) => ({ type: 'pips' as const, value })),
      rest: opening,
    })
    .map(({ symbol, action, entry, rest }) => ({ symbol, action, entry, ...rest })),
  fc
    .record({
      symbol,
      action: fc.constantFrom('closebuy', 'closesell', 'closeall'),
      close: fc.option(
        fc.oneof(
          fc.integer({ min: 1, max: 100 }).map((pct) => ({ pct })),
          fc.integer({ min: 1, max: 300 }).map((n) => ({ lots: n / 100 })),
        ),
        { nil: undefined },
      ),
    })
    .map(({ close, ...rest }) => (close === undefined ? rest : { ...rest, close })),
  fc.record({ symbol, action: fc.constantFrom('cancellong', 'cancelshort') }),
  fc
    .record({ symbol, action: fc.constantFrom('positionlong', 'positionshort', 'positionflat'), rest: opening })
    .map(({ symbol, action, rest }) => ({ symbol, action, ...rest })),
);

type Step = { tick: { symbol: Sym; move: number; spread: number } } | { signal: NormalizedSignal };

const steps = fc.array(
  fc.oneof(
    {
      weight: 2,
      arbitrary: fc
        .record({ symbol, move: fc.integer({ min: -25, max: 25 }), spread: fc.integer({ min: 0, max: 4 }) })
        .map((tick) => ({ tick })),
    },
    { weight: 1, arbitrary: signal.map((s) => ({ signal: s })) },
  ),
  { minLength: 30, maxLength: 100 },
) as fc.Arbitrary<Step[]>;

interface Run {
  states: EngineState[];
  events: EngineEvent[];
}

function run(script: Step[]): Run {
  let state = createEngineState({ balance: 10_000 });
  const mids: Record<Sym, number> = { EURUSD: SYMBOLS.EURUSD.start, USDJPY: SYMBOLS.USDJPY.start };
  const states = [state];
  const events: EngineEvent[] = [];
  // Prices first, so signals are not all rejected for want of one.
  const opening: Step[] = [
    { tick: { symbol: 'EURUSD', move: 0, spread: 2 } },
    { tick: { symbol: 'USDJPY', move: 0, spread: 2 } },
  ];
  for (const [time, step] of [...opening, ...script].entries()) {
    let result;
    if ('tick' in step) {
      const { symbol: s, move, spread } = step.tick;
      const { pip, digits } = SYMBOLS[s];
      mids[s] = Math.max(mids[s] + move * pip, 100 * pip);
      const bid = Number(mids[s].toFixed(digits));
      result = applyTick(state, { time, symbol: s, bid, ask: Number((bid + spread * pip).toFixed(digits)) });
    } else {
      result = applySignal(state, step.signal, time);
    }
    state = result.state;
    states.push(state);
    events.push(...result.events);
  }
  return { states, events };
}

const RUNS = { numRuns: 150 };

describe('engine properties', () => {
  it('a stop loss never moves against its position', () => {
    fc.assert(
      fc.property(steps, (script) => {
        const { states } = run(script);
        const seen = new Map<number, number>();
        for (const state of states) {
          for (const p of state.positions) {
            const before = seen.get(p.ticket);
            if (before !== undefined) {
              expect(p.sl).not.toBeNull();
              expect(p.side === 'buy' ? p.sl! >= before : p.sl! <= before).toBe(true);
            }
            if (p.sl !== null) seen.set(p.ticket, p.sl);
          }
        }
      }),
      RUNS,
    );
  });

  it("a position's closed volume never exceeds its opened volume", () => {
    fc.assert(
      fc.property(steps, (script) => {
        const { states, events } = run(script);
        const opened = new Map<number, number>();
        const closed = new Map<number, number>();
        const finished = new Set<number>();
        for (const e of events) {
          if (e.type === 'opened') opened.set(e.position, e.volume);
          if (e.type === 'partial_close' || e.type === 'closed') {
            expect(finished.has(e.position)).toBe(false);
            closed.set(e.position, (closed.get(e.position) ?? 0) + e.volume);
            expect(closed.get(e.position)!).toBeLessThanOrEqual(opened.get(e.position)! + 1e-9);
            if (e.type === 'closed') finished.add(e.position);
          }
        }
        // and what is still open is exactly what was opened less what was closed
        for (const p of states.at(-1)!.positions) {
          expect(p.volume).toBeCloseTo(opened.get(p.ticket)! - (closed.get(p.ticket) ?? 0), 9);
        }
        for (const ticket of finished) {
          expect(closed.get(ticket)).toBeCloseTo(opened.get(ticket)!, 9);
        }
      }),
      RUNS,
    );
  });

  it('the balance changes by exactly the sum of the realized profits', () => {
    fc.assert(
      fc.property(steps, (script) => {
        const { states, events } = run(script);
        let realized = 0;
        for (const e of events) if (e.type === 'partial_close' || e.type === 'closed') realized += e.profit;
        expect(states.at(-1)!.balance - 10_000).toBeCloseTo(realized, 6);
      }),
      RUNS,
    );
  });

  it('after an executed position target, the symbol holds exactly that: no pending entries, only positions of its side and at least one for long or short', () => {
    fc.assert(
      fc.property(steps, (script) => {
        let state = run([]).states.at(-1)!;
        const mids: Record<Sym, number> = { EURUSD: SYMBOLS.EURUSD.start, USDJPY: SYMBOLS.USDJPY.start };
        for (const [time, step] of script.entries()) {
          if ('tick' in step) {
            const { symbol: s, move, spread } = step.tick;
            const { pip, digits } = SYMBOLS[s];
            mids[s] = Math.max(mids[s] + move * pip, 100 * pip);
            const bid = Number(mids[s].toFixed(digits));
            state = applyTick(state, {
              time: time + 2,
              symbol: s,
              bid,
              ask: Number((bid + spread * pip).toFixed(digits)),
            }).state;
            continue;
          }
          const { signal } = step;
          const before = state;
          const result = applySignal(state, signal, time + 2);
          state = result.state;
          const target = { positionlong: 'buy', positionshort: 'sell', positionflat: null }[signal.action as string];
          if (target === undefined) continue;
          if (result.outcome.status === 'rejected') {
            // All or nothing: a refused target leaves the account as it was.
            expect(state).toBe(before);
            continue;
          }
          expect(state.orders.filter((o) => o.symbol === signal.symbol)).toEqual([]);
          const held = state.positions.filter((p) => p.symbol === signal.symbol);
          expect(held.every((p) => p.side === target)).toBe(true);
          if (target !== null) expect(held.length).toBeGreaterThanOrEqual(1);
          // Applied again at once, it does nothing.
          expect(applySignal(state, signal, time + 2).events).toEqual([]);
        }
      }),
      RUNS,
    );
  });
});

describe('the random runs', () => {
  it('exercise what the properties are about (stops moved, partial and full closes, fills)', () => {
    const counts = new Map<string, number>();
    for (const script of fc.sample(steps, { numRuns: 150, seed: 7 })) {
      for (const e of run(script).events) {
        const key = e.type === 'closed' ? `closed:${e.reason}` : e.type;
        counts.set(key, (counts.get(key) ?? 0) + 1);
      }
    }
    for (const key of [
      'sl_moved',
      'partial_close',
      'closed:sl',
      'closed:tp',
      'closed:signal',
      'order_filled',
      'opened',
    ]) {
      expect(counts.get(key) ?? 0, key).toBeGreaterThan(5);
    }
  });
});
