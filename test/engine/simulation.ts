/**
 * A test driver over the pure engine: keeps the current state, advances a fake clock one
 * millisecond per step, and records every event, so scenarios read as a list of steps.
 */
import {
  applySignal,
  applyTick,
  createEngineState,
  summarize,
  type EngineEvent,
  type EngineOptions,
  type EngineState,
  type SignalResult,
} from '../../src/engine/index.js';
import type { NormalizedSignal } from '../../src/language/index.js';

export interface Simulation {
  state: EngineState;
  readonly events: EngineEvent[];
  tick(symbol: string, bid: number, ask: number): EngineEvent[];
  signal(signal: NormalizedSignal): SignalResult;
  summary(): ReturnType<typeof summarize>;
  /** The events of one type, in order. */
  of<T extends EngineEvent['type']>(type: T): Extract<EngineEvent, { type: T }>[];
}

export function simulation(options: Partial<EngineOptions> = {}): Simulation {
  let time = 0;
  const sim: Simulation = {
    state: createEngineState({ balance: 10_000, currency: 'USD', ...options }),
    events: [],
    tick(symbol, bid, ask) {
      const result = applyTick(sim.state, { time: ++time, symbol, bid, ask });
      sim.state = result.state;
      sim.events.push(...result.events);
      return result.events;
    },
    signal(signal) {
      const result = applySignal(sim.state, signal, ++time);
      sim.state = result.state;
      sim.events.push(...result.events);
      return result;
    },
    summary: () => summarize(sim.state, time),
    of: (type) => sim.events.filter((e) => e.type === type) as never,
  };
  return sim;
}

/** A normalized signal, for brevity. */
export function sig(
  symbol: string,
  action: NormalizedSignal['action'],
  rest: Partial<NormalizedSignal> = {},
): NormalizedSignal {
  return { symbol, action, ...rest };
}

export const lots = (value: number) => ({ type: 'lots', value }) as const;
export const pips = (value: number) => ({ type: 'pips', value }) as const;
export const price = (value: number) => ({ type: 'price', value }) as const;
export const percent = (value: number) => ({ type: 'percent', value }) as const;
/** One take-profit level closing everything. */
export const tp = (d: { type: 'pips' | 'price' | 'percent'; value: number }) => [{ ...d, pct: 100 }];

/** The only rejection reason among these events. */
export function rejection(events: readonly EngineEvent[]): string {
  const rejected = events.filter((e) => e.type === 'rejected');
  if (rejected.length !== 1) throw new Error(`expected one rejected event, got ${JSON.stringify(events)}`);
  return (rejected[0] as Extract<EngineEvent, { type: 'rejected' }>).reason;
}
