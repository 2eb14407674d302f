/**
 * A signal, applied at the current prices. Close actions close, cancel actions cancel;
 * opening actions first close what they must (closelong…/closeshort…: that side; exop/exent:
 * the opposite side; with the signal's comment as filter), then open a market position or
 * place a pending order, unless exop says not to. Position targets (positionlong…) make the
 * symbol's position what they name (see reachPosition). A signal is applied entirely or not at all:
 * when any step is rejected, nothing of it happens and the state is returned unchanged.
 */
import type { Action, NormalizedSignal } from '../language/index.js';
import { closeSelected } from './close-actions.js';
import { rejectedEvent } from './events.js';
import { resolveInstrument, type InstrumentSpec } from './instruments.js';
import { closeLedger, openLedger, type Ledger } from './ledger.js';
import { oppositeSide, type Side } from './market.js';
import { openMarket, placeOrder, type StepOutcome } from './opening.js';
import { describeEvents, type SignalOutcome } from './outcome.js';
import type { OrderKind } from './pending-orders.js';
import { commentMatches } from './positions.js';
import type { StepResult } from './apply-tick.js';
import type { EngineState } from './state.js';
import { brokerSymbol, catalogName, resolveSignalSymbol } from './symbol-map.js';

export interface SignalRef {
  /** The signal as it was sent; quoted in a `rejected` event. */
  readonly text?: string;
  /** Kept on the positions and orders the signal creates. */
  readonly signalId?: string;
}

export interface SignalResult extends StepResult {
  readonly outcome: SignalOutcome;
}

/** How an opening action trades: its side, its order kind (null: market) and what it closes first. */
const OPENING: Partial<Record<Action, { side: Side; kind: OrderKind | null; closeFirst: Side | null }>> = {
  buy: { side: 'buy', kind: null, closeFirst: null },
  sell: { side: 'sell', kind: null, closeFirst: null },
  closelongbuy: { side: 'buy', kind: null, closeFirst: 'buy' },
  closelongsell: { side: 'sell', kind: null, closeFirst: 'buy' },
  closeshortbuy: { side: 'buy', kind: null, closeFirst: 'sell' },
  closeshortsell: { side: 'sell', kind: null, closeFirst: 'sell' },
  buylimit: { side: 'buy', kind: 'limit', closeFirst: null },
  buystop: { side: 'buy', kind: 'stop', closeFirst: null },
  selllimit: { side: 'sell', kind: 'limit', closeFirst: null },
  sellstop: { side: 'sell', kind: 'stop', closeFirst: null },
};

const TARGET_WORD: Partial<Record<Action, string>> = {
  positionlong: 'long',
  positionshort: 'short',
  positionflat: 'flat',
};
const TARGET_SIDE: Partial<Record<Action, Side | null>> = {
  positionlong: 'buy',
  positionshort: 'sell',
  positionflat: null,
};

/**
 * A position target: the symbol's pending entries are cancelled and its positions of any other
 * side closed (those with the signal's comment, when it has one); a long or short target then
 * opens a position only when none of its side is open. Already there is done, not refused: the
 * sender says what to hold, and a repeat changes nothing.
 */
function reachPosition(
  ledger: Ledger,
  signal: NormalizedSignal,
  symbol: string,
  spec: InstrumentSpec,
  signalId: string | null,
): StepOutcome {
  const side = TARGET_SIDE[signal.action] ?? null;
  const { comment } = signal;
  const cancelled = ledger.orders.filter((o) => o.symbol === symbol && commentMatches(o.comment, comment));
  ledger.orders = ledger.orders.filter((o) => !cancelled.includes(o));
  for (const order of cancelled) {
    ledger.events.push({ type: 'order_cancelled', time: ledger.time, order: order.ticket, reason: 'signal' });
  }
  if (side === null) {
    closeSelected(ledger, { symbol, side: null, comment }, undefined, 'signal', spec);
    return { ok: true };
  }
  closeSelected(ledger, { symbol, side: oppositeSide(side), comment }, undefined, 'signal', spec);
  const held = ledger.positions.some(
    (p) => p.symbol === symbol && p.side === side && commentMatches(p.comment, comment),
  );
  if (held) return { ok: true };
  return openMarket(ledger, { signal, side, symbol, spec, signalId });
}

export function applySignal(
  state: EngineState,
  signal: NormalizedSignal,
  time: number,
  ref: SignalRef = {},
): SignalResult {
  const ledger = openLedger(state, time);
  const done = execute(ledger, signal, ref.signalId ?? null);
  if (!done.ok) {
    const text = ref.text ?? `${signal.symbol},${signal.action}`;
    return {
      state,
      events: [rejectedEvent(time, text, done.reason)],
      outcome: { status: 'rejected', message: done.reason },
    };
  }
  // A position target already reached does nothing, and says so.
  const message =
    describeEvents(ledger.events) ||
    `${signal.symbol} is already ${TARGET_WORD[signal.action] ?? 'as asked'}; nothing to do`;
  return {
    state: closeLedger(ledger),
    events: ledger.events,
    outcome: { status: 'executed', message },
  };
}

function execute(ledger: Ledger, signal: NormalizedSignal, signalId: string | null): StepOutcome {
  const map = ledger.config.symbolMap;
  const resolved = resolveSignalSymbol(map, signal.symbol);
  if (!resolved.ok) return { ok: false, reason: resolved.reason };
  const { canonical } = resolved;
  const symbol = brokerSymbol(map, canonical);
  const spec = resolveInstrument(catalogName(map, canonical), ledger.config.instruments);
  const { comment } = signal;
  const filtered = comment === undefined ? '' : ` with comment "${comment}"`;
  if (spec === null) {
    return { ok: false, reason: `${canonical} is not a known instrument; define it in the instruments file` };
  }

  switch (signal.action) {
    case 'closebuy':
    case 'closesell':
    case 'closeall': {
      const side = signal.action === 'closebuy' ? 'buy' : signal.action === 'closesell' ? 'sell' : null;
      const result = closeSelected(ledger, { symbol, side, comment }, signal.close, 'signal', spec);
      if (result.matched === 0) {
        return {
          ok: false,
          reason: `there are no open ${side === null ? '' : `${side} `}positions on ${symbol}${filtered} to close`,
        };
      }
      if (result.touched === 0) {
        return {
          ok: false,
          reason: `the amount to close is below the minimum of ${spec.lotMin} lots for every matching position; nothing was closed`,
        };
      }
      return { ok: true };
    }
    case 'cancellong':
    case 'cancelshort': {
      const side: Side = signal.action === 'cancellong' ? 'buy' : 'sell';
      const cancelled = ledger.orders.filter(
        (o) => o.symbol === symbol && o.side === side && commentMatches(o.comment, comment),
      );
      if (cancelled.length === 0) {
        return { ok: false, reason: `there are no pending ${side} orders on ${symbol}${filtered} to cancel` };
      }
      ledger.orders = ledger.orders.filter((o) => !cancelled.includes(o));
      for (const order of cancelled) {
        ledger.events.push({ type: 'order_cancelled', time: ledger.time, order: order.ticket, reason: 'signal' });
      }
      return { ok: true };
    }
    case 'positionlong':
    case 'positionshort':
    case 'positionflat':
      return reachPosition(ledger, signal, symbol, spec, signalId);
  }

  const opening = OPENING[signal.action];
  if (opening === undefined) return { ok: false, reason: `the action ${signal.action} is not supported` };
  const { side, kind, closeFirst } = opening;
  let closed = 0;
  if (closeFirst !== null) {
    closed += closeSelected(ledger, { symbol, side: closeFirst, comment }, undefined, 'signal', spec).matched;
  }
  if (signal.opposite !== undefined) {
    closed += closeSelected(ledger, { symbol, side: oppositeSide(side), comment }, undefined, 'opposite', spec).matched;
    if (signal.opposite === 'exit') {
      if (closed > 0) return { ok: true };
      return {
        ok: false,
        reason: `there are no open ${oppositeSide(side)} positions on ${symbol}${filtered} to exit (exop opens nothing)`,
      };
    }
  }
  const request = { signal, side, symbol, spec, signalId };
  return kind === null ? openMarket(ledger, request) : placeOrder(ledger, request, kind);
}
