/**
 * The execution engine's public face. Pure: data in, data out; no I/O, clock or randomness.
 *
 *   let state = createEngineState({ balance: 10_000, currency: 'USD' });
 *   ({ state, events } = applyTick(state, { time, symbol: 'EURUSD', bid: 1.1, ask: 1.1002 }));
 *   const r = applySignal(state, signal, time, { text, signalId });  // r.outcome: executed | rejected
 *   summarize(r.state, time);
 *
 * States are never mutated; each step returns a new one sharing the unchanged parts.
 */
export { applySignal, type SignalRef, type SignalResult } from './apply-signal.js';
export { applyTick, type StepResult, type Tick } from './apply-tick.js';
export { applyFill, type BookFill } from './apply-fill.js';
export { reviseClose, type CloseFill } from './close-fill.js';
export { ENGINE_FILLS, type Filler, type FillRules } from './fill-rules.js';
export type * from './events.js';
export { rejectedEvent } from './events.js';
export {
  defaultInstrument,
  resolveInstrument,
  type InstrumentOverride,
  type InstrumentOverrides,
  type InstrumentSpec,
} from './instruments.js';
export { parseInstrumentsFile, type InstrumentsFile, type InstrumentsFileOutcome } from './instruments-file.js';
export type { Quote, Side } from './market.js';
export {
  interleave,
  parseSignalsFile,
  parseTicksFile,
  parseTimestamp,
  type FileOutcome,
  type ReplaySignal,
  type ReplayStep,
  type ReplayTick,
} from './replay-input.js';
export { describeEvents, type SignalOutcome } from './outcome.js';
// For the risk rules' notional per order, in the account currency.
export { notionalOf } from './ledger.js';
export type { OrderKind, PendingOrder } from './pending-orders.js';
export type { Position } from './positions.js';
export { createEngineState, type EngineConfig, type EngineOptions, type EngineState } from './state.js';
export { summarize } from './summary.js';
// For the agent's venues: the lots each take-profit level closes, and the shape of a target level.
export { floorToStep, partialCloseLots } from './lots.js';
export type { TargetLevel } from './stops.js';
export {
  brokerSymbol,
  canonicalSymbol,
  catalogName,
  createSymbolMap,
  resolveSignalSymbol,
  type SignalSymbol,
  type SymbolMap,
} from './symbol-map.js';
