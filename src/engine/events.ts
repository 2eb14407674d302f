/**
 * What the engine reports (docs/engine.md, "Output"). `time` is Unix milliseconds here; the edges
 * (the simulate command) print it as ISO 8601 UTC. Prices are on the instrument's decimal grid,
 * volumes on the lot step's, money to the cent, in the account currency.
 */
import type { Side } from './market.js';
import type { OrderKind } from './pending-orders.js';

/** Why a position closed: stop loss, take profit, a close signal, or an exop/exent signal. */
export type CloseReason = 'sl' | 'tp' | 'signal' | 'opposite';

export interface OpenedEvent {
  type: 'opened';
  time: number;
  position: number;
  symbol: string;
  side: Side;
  /** Lots opened: what the venue filled. */
  volume: number;
  /** Lots asked for, present only when the venue filled fewer than that (a partial fill). */
  requested?: number;
  price: number;
  sl: number | null;
  /** The first take-profit level, or null. */
  tp: number | null;
  comment: string | null;
}

export interface PartialCloseEvent {
  type: 'partial_close';
  time: number;
  position: number;
  /** Lots closed: what the venue filled. */
  volume: number;
  /** Lots the close asked for, present only when the venue filled fewer (the rest stays open). */
  requested?: number;
  price: number;
  profit: number;
}

export interface ClosedEvent {
  type: 'closed';
  time: number;
  position: number;
  /** The lots this close took (what was still open). */
  volume: number;
  price: number;
  profit: number;
  reason: CloseReason;
}

export interface SlMovedEvent {
  type: 'sl_moved';
  time: number;
  position: number;
  sl: number;
  reason: 'breakeven' | 'trailing';
}

export interface OrderPlacedEvent {
  type: 'order_placed';
  time: number;
  order: number;
  symbol: string;
  side: Side;
  kind: OrderKind;
  volume: number;
  price: number;
  comment: string | null;
}

export interface OrderFilledEvent {
  type: 'order_filled';
  time: number;
  order: number;
  position: number;
  price: number;
}

export interface OrderCancelledEvent {
  type: 'order_cancelled';
  time: number;
  order: number;
  reason: string;
}

export interface RejectedEvent {
  type: 'rejected';
  time: number;
  /** The signal as it was sent. */
  signal: string;
  /** A sentence saying why. */
  reason: string;
}

export interface PositionSummary {
  position: number;
  symbol: string;
  side: Side;
  volume: number;
  price: number;
  sl: number | null;
  comment: string | null;
}

export interface OrderSummary {
  order: number;
  symbol: string;
  side: Side;
  kind: OrderKind;
  volume: number;
  price: number;
  sl: number | null;
  comment: string | null;
}

export interface SummaryEvent {
  type: 'summary';
  time: number;
  balance: number;
  equity: number;
  currency: string;
  positions: PositionSummary[];
  orders: OrderSummary[];
}

export type EngineEvent =
  | OpenedEvent
  | PartialCloseEvent
  | ClosedEvent
  | SlMovedEvent
  | OrderPlacedEvent
  | OrderFilledEvent
  | OrderCancelledEvent
  | RejectedEvent;

export function rejectedEvent(time: number, signal: string, reason: string): RejectedEvent {
  return { type: 'rejected', time, signal, reason };
}
