/**
 * A close the venue filled otherwise than the engine assumed: fewer lots (a broker that filled
 * part of the closing order and cancelled the rest) or at another price. The engine's close,
 * already applied to the state, is taken back (its profit off the balance, the position's lots
 * back) and the venue's fill applied instead, so the book holds what the account holds.
 */
import { closeLots } from './closing.js';
import { roundMoney } from './decimals.js';
import type { ClosedEvent, PartialCloseEvent } from './events.js';
import { closeLedger, instrumentOf, openLedger } from './ledger.js';
import { roundLots } from './lots.js';
import type { Position } from './positions.js';
import type { EngineState } from './state.js';

export interface CloseFill {
  /** Lots the venue filled: more than 0, at most the lots the engine closed. */
  volume: number;
  price: number;
}

/**
 * `was` is the position as it stood before the engine's close `event`; the answer is the state
 * with `fill` in its place and the event that says so: `partial_close` with `requested` (the
 * lots the engine closed) when fewer filled, the position staying open with the rest.
 */
export function reviseClose(
  state: EngineState,
  was: Position,
  event: PartialCloseEvent | ClosedEvent,
  fill: CloseFill,
): { state: EngineState; event: PartialCloseEvent | ClosedEvent } {
  const spec = instrumentOf(state.config, was.symbol);
  // The engine closed it, so it knew the instrument.
  if (spec === null)
    throw new Error(`no instrument for ${was.symbol} while revising the close of position ${was.ticket}`);
  const volume = Math.min(fill.volume, event.volume);
  const ledger = openLedger({ ...state, balance: roundMoney(state.balance - event.profit) }, event.time);
  const left = ledger.positions.find((p) => p.ticket === was.ticket);
  // What the engine's close left of the position (a partial close), with its lots back; or the position as it was.
  const before = left ? { ...left, volume: roundLots(left.volume + event.volume, spec.lotStep) } : was;
  const rest = closeLots(ledger, before, volume, fill.price, event.type === 'closed' ? event.reason : 'signal', spec);
  const others = ledger.positions.filter((p) => p.ticket !== was.ticket);
  // Oldest first, as the engine keeps them: tickets grow with time.
  ledger.positions = rest === null ? others : [...others, rest].sort((a, b) => a.ticket - b.ticket);
  const revised = ledger.events[ledger.events.length - 1] as PartialCloseEvent | ClosedEvent;
  return {
    state: closeLedger(ledger),
    event:
      revised.type === 'partial_close' && volume < event.volume ? { ...revised, requested: event.volume } : revised,
  };
}
