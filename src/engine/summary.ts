/** The account at a moment: balance, equity, open positions and pending orders (the `summary` event). */
import { equityOf } from './equity.js';
import type { SummaryEvent } from './events.js';
import type { EngineState } from './state.js';

export function summarize(state: EngineState, time: number): SummaryEvent {
  return {
    type: 'summary',
    time,
    balance: state.balance,
    equity: equityOf(state.config, state.quotes, state.balance, state.positions),
    currency: state.config.currency,
    positions: state.positions.map((p) => ({
      position: p.ticket,
      symbol: p.symbol,
      side: p.side,
      volume: p.volume,
      price: p.price,
      sl: p.sl,
      comment: p.comment,
    })),
    orders: state.orders.map((o) => ({
      order: o.ticket,
      symbol: o.symbol,
      side: o.side,
      kind: o.kind,
      volume: o.volume,
      price: o.price,
      sl: o.sl,
      comment: o.comment,
    })),
  };
}
