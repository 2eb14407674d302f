/**
 * Close actions: act on one symbol's positions of one side (or both), filtered
 * by comment when one is given (case-insensitive). Without an amount they close each position
 * entirely; `pct` closes that share of each; `lots` (pct_lots) closes that many lots, oldest
 * position first. Partial amounts follow the lot rules of `partialCloseLots`.
 */
import type { CloseAmount } from '../language/index.js';
import { closeLots } from './closing.js';
import type { CloseReason } from './events.js';
import type { InstrumentSpec } from './instruments.js';
import type { Ledger } from './ledger.js';
import { partialCloseLots } from './lots.js';
import { closePrice, type Side } from './market.js';
import { commentMatches, type Position } from './positions.js';

export interface CloseSelection {
  /** Broker symbol. */
  readonly symbol: string;
  /** null: both sides. */
  readonly side: Side | null;
  readonly comment: string | undefined;
}

export function selects(selection: CloseSelection, position: Position): boolean {
  return (
    position.symbol === selection.symbol &&
    (selection.side === null || position.side === selection.side) &&
    commentMatches(position.comment, selection.comment)
  );
}

export interface CloseResult {
  /** Positions the selection matched. */
  readonly matched: number;
  /** Positions closed entirely or in part. */
  readonly touched: number;
}

/** Closes what the selection matches, at the current closing prices, oldest position first. */
export function closeSelected(
  ledger: Ledger,
  selection: CloseSelection,
  amount: CloseAmount | undefined,
  reason: CloseReason,
  spec: InstrumentSpec,
): CloseResult {
  const quote = ledger.quotes[selection.symbol];
  let matched = 0;
  let touched = 0;
  let lotsLeft = amount !== undefined && 'lots' in amount ? amount.lots : Infinity;
  const kept: Position[] = [];
  for (const position of ledger.positions) {
    if (!selects(selection, position) || quote === undefined) {
      kept.push(position);
      continue;
    }
    matched++;
    let lots: number;
    if (amount === undefined) lots = position.volume;
    else if ('pct' in amount) lots = partialCloseLots((position.volume * amount.pct) / 100, position.volume, spec);
    else lots = lotsLeft > 0 ? partialCloseLots(Math.min(lotsLeft, position.volume), position.volume, spec) : 0;
    if (lots <= 0) {
      kept.push(position);
      continue;
    }
    lotsLeft -= lots;
    touched++;
    const rest = closeLots(ledger, position, lots, closePrice(position.side, quote), reason, spec);
    if (rest !== null) kept.push(rest);
  }
  ledger.positions = kept;
  return { matched, touched };
}
