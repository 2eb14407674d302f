import { pathToFileURL } from 'node:url';
import { applySignal, applyTick, createEngineState, type EngineState, type Tick } from '../src/engine/index.js';

/**
 * Engine throughput: ticks per second through applyTick with 100 open EURUSD positions, each
 * with a stop, a take profit, trailing and breakeven, so every tick does the full management
 * work (stop and target checks, trailing candidates, breakeven checks) on every position.
 * The price oscillates inside the stops and targets, so the positions stay open throughout.
 * Several timed runs over the same ticks after a warm-up; the median is reported.
 *
 *   node --import ./bench/run-typescript.mjs bench/engine.ts   (BENCH_ENGINE_TICKS, BENCH_ENGINE_RUNS to change the size)
 */
const TICKS = Number(process.env.BENCH_ENGINE_TICKS ?? 200_000);
const RUNS = Number(process.env.BENCH_ENGINE_RUNS ?? 7);
const POSITIONS = 100;
const PIP = 0.0001;

export interface EngineBenchResult {
  benchmark: 'engine';
  positions: number;
  ticksPerRun: number;
  runs: number;
  medianTicksPerSecond: number;
  minTicksPerSecond: number;
  maxTicksPerSecond: number;
  /** Positions still open after a run: should equal `positions`, or the load was lighter than claimed. */
  openAfterRun: number;
  slMovesPerRun: number;
}

/** A deterministic feed: a slow swing of ±40 pips with a little noise, spread 1.5 pips. */
function makeTicks(count: number): Tick[] {
  let seed = 12345;
  const noise = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed / 2147483648 - 0.5;
  };
  const ticks: Tick[] = [];
  for (let i = 0; i < count; i++) {
    const mid = 1.1 + 40 * PIP * Math.sin(i / 700) + 4 * PIP * noise();
    const bid = Math.round(mid * 1e5) / 1e5;
    ticks.push({ time: 1_000 + i, symbol: 'EURUSD', bid, ask: Math.round((bid + 1.5 * PIP) * 1e5) / 1e5 });
  }
  return ticks;
}

function openBook(): EngineState {
  let state = applyTick(createEngineState({ balance: 10_000_000 }), {
    time: 0,
    symbol: 'EURUSD',
    bid: 1.1,
    ask: 1.10015,
  }).state;
  for (let i = 0; i < POSITIONS; i++) {
    const result = applySignal(
      state,
      {
        symbol: 'EURUSD',
        action: i % 2 === 0 ? 'buy' : 'sell',
        volume: { type: 'lots', value: 0.1 },
        sl: { type: 'pips', value: 300 },
        tp: [
          { type: 'pips', value: 300, pct: 50 },
          { type: 'pips', value: 400, pct: 50 },
        ],
        trail: { trigger: 0, distance: 200 + (i % 20), step: 1 },
        breakeven: { trigger: 150, offset: 5 },
      },
      1 + i,
    );
    if (result.outcome.status !== 'executed') throw new Error(`bench setup: ${result.outcome.message}`);
    state = result.state;
  }
  return state;
}

export function benchEngine(ticksPerRun = TICKS, runs = RUNS): EngineBenchResult {
  const ticks = makeTicks(ticksPerRun);
  const book = openBook();
  const once = (): { seconds: number; state: EngineState; slMoves: number } => {
    let state = book;
    let slMoves = 0;
    const start = performance.now();
    for (const tick of ticks) {
      const result = applyTick(state, tick);
      state = result.state;
      slMoves += result.events.length;
    }
    return { seconds: (performance.now() - start) / 1000, state, slMoves };
  };
  once(); // warm-up: let the JIT settle before timing
  const rates: number[] = [];
  let last = once();
  for (let r = 0; r < runs; r++) {
    last = once();
    rates.push(ticksPerRun / last.seconds);
  }
  rates.sort((a, b) => a - b);
  return {
    benchmark: 'engine',
    positions: POSITIONS,
    ticksPerRun,
    runs,
    medianTicksPerSecond: Math.round(rates[Math.floor(rates.length / 2)]!),
    minTicksPerSecond: Math.round(rates[0]!),
    maxTicksPerSecond: Math.round(rates.at(-1)!),
    openAfterRun: last.state.positions.length,
    slMovesPerRun: last.slMoves,
  };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  process.stdout.write(`${JSON.stringify(benchEngine())}\n`);
}
