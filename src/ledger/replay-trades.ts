/**
 * The trades of a replay (`signalgate simulate --from-log`), in the ledger's shape, so that the
 * replay's statistics are computed as the ledger's are and the two can be set side by side.
 * Pure: the engine's events in, with the signal each step applied (null for a tick), trades out.
 *
 * Each close is a trade of the lots it closed: a position closed in two parts (a first take
 * profit, then the rest) is two trades with the same entry, as a venue's closing deals are. A
 * position still open at the end is one open trade of its remaining lots. The engine charges no
 * fees or funding, so both are 0 and the realized profit is the engine's.
 */
import type { EngineEvent } from '../engine/index.js';
import type { LedgerTrade } from './ledger-trade.js';

/** The signal a replay step applied, as the log recorded it. */
export interface ReplayedSignal {
  id: string;
  sourceId: string;
  accountId: string;
  /** ISO time. */
  receivedAt: string;
  /** The quote the entry was priced against when the signal was applied: the ask for a buy, the bid for a sell. */
  quote: { bid: number; ask: number } | null;
}

export interface ReplayStepEvents {
  signal: ReplayedSignal | null;
  events: readonly EngineEvent[];
}

interface OpenPosition {
  trade: LedgerTrade;
  /** Lots still open. */
  lots: number;
  closes: number;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** The trades of a replay's steps, in the order they closed, then the ones still open. */
export function replayTrades(
  steps: readonly ReplayStepEvents[],
  owner: { agentId: string; accountId: string; sourceId: string | null },
): LedgerTrade[] {
  const open = new Map<number, OpenPosition>();
  const orders = new Map<
    number,
    { symbol: string; side: 'buy' | 'sell'; volume: number; comment: string | null; signal: ReplayedSignal | null }
  >();
  const trades: LedgerTrade[] = [];

  const openTrade = (
    position: number,
    opening: { symbol: string; side: 'buy' | 'sell'; volume: number; price: number; time: number },
    comment: string | null,
    signal: ReplayedSignal | null,
  ) => {
    const long = opening.side === 'buy';
    const quote = signal?.quote ?? null;
    open.set(position, {
      lots: opening.volume,
      closes: 0,
      trade: {
        id: `replay-${position}`,
        agentId: owner.agentId,
        accountId: signal?.accountId ?? owner.accountId,
        sourceId: signal?.sourceId ?? owner.sourceId,
        strategy: comment,
        symbol: opening.symbol,
        side: long ? 'long' : 'short',
        lots: opening.volume,
        entryAt: iso(opening.time),
        entryPrice: opening.price,
        exitAt: null,
        exitPrice: null,
        fees: 0,
        funding: 0,
        realizedProfit: null,
        openingSignalId: signal?.id ?? null,
        closingSignalIds: [],
        quoteAtReceipt: quote === null ? null : long ? quote.ask : quote.bid,
        receivedAt: signal?.receivedAt ?? null,
        firstFillAt: iso(opening.time),
      },
    });
  };

  const close = (
    position: number,
    event: { time: number; volume: number; price: number; profit: number },
    signal: ReplayedSignal | null,
  ) => {
    const held = open.get(position);
    if (held === undefined) return;
    held.closes += 1;
    held.lots = Math.round((held.lots - event.volume) * 1e8) / 1e8;
    trades.push({
      ...held.trade,
      id: `${held.trade.id}-${held.closes}`,
      lots: event.volume,
      exitAt: iso(event.time),
      exitPrice: event.price,
      realizedProfit: event.profit,
      closingSignalIds: signal === null ? [] : [signal.id],
    });
    if (held.lots <= 0) open.delete(position);
  };

  for (const { signal, events } of steps) {
    for (const event of events) {
      switch (event.type) {
        case 'opened':
          openTrade(event.position, event, event.comment, signal);
          break;
        case 'order_placed':
          orders.set(event.order, { ...event, signal });
          break;
        case 'order_filled': {
          const order = orders.get(event.order);
          // A pending entry fills at its own price, chosen on purpose: no slippage against the quote at receipt.
          const signal = order?.signal ? { ...order.signal, quote: null } : null;
          if (order !== undefined) openTrade(event.position, { ...order, ...event }, order.comment, signal);
          break;
        }
        case 'partial_close':
          close(event.position, event, signal);
          break;
        case 'closed':
          close(event.position, event, signal);
          break;
        default:
          break;
      }
    }
  }
  return [...trades, ...[...open.values()].map((held) => ({ ...held.trade, lots: held.lots }))];
}
