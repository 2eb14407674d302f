/**
 * Open positions: what is held, at what price, and the rules (stop, targets, breakeven,
 * trailing) that manage it on every tick. Plain data, so the paper agent can persist it.
 */
import type { Breakeven, Trail } from '../language/index.js';
import { direction, type Side } from './market.js';
import type { TargetLevel } from './stops.js';

export interface Position {
  /** Ticket number, unique among the engine's positions and orders. */
  readonly ticket: number;
  /** Broker symbol. */
  readonly symbol: string;
  readonly side: Side;
  /** Lots still open. */
  readonly volume: number;
  /** Lots opened; take-profit shares are percentages of it. */
  readonly originalVolume: number;
  /** Fill price. */
  readonly price: number;
  readonly sl: number | null;
  readonly tp: readonly TargetLevel[];
  /** Index of the first take-profit level not reached yet. */
  readonly tpNext: number;
  readonly comment: string | null;
  readonly trail: Trail | null;
  readonly breakeven: Breakeven | null;
  /** Breakeven acts once; set when it has. */
  readonly breakevenDone: boolean;
  readonly openedAt: number;
  /** Id of the signal that opened it (or placed the order that did), when known. */
  readonly signalId: string | null;
}

/** Profit, in the instrument's quote currency, of `lots` opened at `open` and closed at `close`. */
export function quoteProfit(side: Side, open: number, close: number, lots: number, contractSize: number): number {
  return direction(side) * (close - open) * lots * contractSize;
}

/** Comment filter of close actions: case-insensitive equality; no filter matches everything. */
export function commentMatches(comment: string | null, filter: string | undefined): boolean {
  if (filter === undefined) return true;
  return comment !== null && comment.toLowerCase() === filter.toLowerCase();
}
