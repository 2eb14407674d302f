import type { RecordedBust } from './ledger-bust.js';
import type { LedgerTrade } from './ledger-trade.js';
import type { RecordedFill, RecordedFunding } from './recorded-fill.js';

/** Lots below this are rounding left-overs of lot arithmetic, not lots. */
const LOT_EPSILON = 1e-9;

/** Lots opened by one fill and not yet closed, with the shares of fee and funding still on them. */
interface OpenLot {
  fill: RecordedFill;
  side: 'long' | 'short';
  lots: number;
  fee: number;
  funding: number;
}

/**
 * The ledger's trades from its fills and funding payments, per agent and symbol, in time order
 * (ties in the order given, which is the order the store recorded them):
 * - an opening fill opens lots: one trade per fill (a partly filled order is several trades);
 * - a closing fill closes the oldest open lots of the other side first (first in, first out); when
 *   it closes only part of a fill's lots, the trade splits: the closed part is a trade of its own,
 *   the rest stays open as another;
 * - a fill without `effect` closes what is open on the other side, and opens with the rest;
 * - a closing fill with nothing open on the other side (a position opened before the ledger began)
 *   makes no trade;
 * - fees are shared by lots (the opening fill's over its lots, the closing fill's over the lots it
 *   closes), and a funding payment over the lots of its symbol open when it was booked;
 * - realized profit = the closing fill's booked profit for those lots (or the price difference
 *   times the lots where it booked none) − fees + funding;
 * - a fill the venue busted counts only for the lots the bust left it (fee and booked profit in
 *   proportion), and not at all when it left none: a busted exit's lots are open again, a busted
 *   entry's trade is gone. Trades keep their ids.
 * Pure: the same fills always give the same trades, with the same ids.
 */
export function buildTrades(
  fills: readonly RecordedFill[],
  funding: readonly RecordedFunding[] = [],
  busts: readonly RecordedBust[] = [],
): LedgerTrade[] {
  const timeline: ({ kind: 'fill'; fill: RecordedFill } | { kind: 'funding'; funding: RecordedFunding })[] = [
    ...standing(fills, busts).map((fill) => ({ kind: 'fill' as const, fill })),
    ...funding.map((payment) => ({ kind: 'funding' as const, funding: payment })),
  ];
  const at = (item: (typeof timeline)[number]) => (item.kind === 'fill' ? item.fill.at : item.funding.at);
  // Stable: equal times keep the order given (fills before funding booked at the same instant).
  const ordered = timeline.map((item, index) => ({ item, index }));
  ordered.sort((a, b) => (at(a.item) < at(b.item) ? -1 : at(a.item) > at(b.item) ? 1 : a.index - b.index));

  const open = new Map<string, OpenLot[]>();
  const trades: LedgerTrade[] = [];
  for (const { item } of ordered) {
    if (item.kind === 'funding') {
      shareFunding(open.get(`${item.funding.agentId}\u0000${item.funding.symbol}`) ?? [], item.funding.amount);
      continue;
    }
    const fill = item.fill;
    const key = `${fill.agentId}\u0000${fill.symbol}`;
    const lots = open.get(key) ?? [];
    open.set(key, lots);
    const closes: 'long' | 'short' = fill.side === 'sell' ? 'long' : 'short';
    let left = fill.lots;
    if (fill.effect !== 'open') {
      for (const lot of lots) {
        if (left <= LOT_EPSILON) break;
        if (lot.side !== closes || lot.lots <= LOT_EPSILON) continue;
        const taken = Math.min(lot.lots, left);
        trades.push(closedPart(lot, fill, taken));
        left -= taken;
      }
      removeClosed(lots);
    }
    if (fill.effect !== 'close' && left > LOT_EPSILON) {
      lots.push({
        fill,
        side: fill.side === 'buy' ? 'long' : 'short',
        lots: left,
        fee: fill.fee * (left / fill.lots),
        funding: 0,
      });
    }
  }
  for (const lots of open.values()) for (const lot of lots) trades.push(openTrade(lot));
  return trades.sort((a, b) => (a.entryAt < b.entryAt ? -1 : a.entryAt > b.entryAt ? 1 : a.id < b.id ? -1 : 1));
}

/** The fills as their busts left them: lots, fee and booked profit in proportion; none left, no fill. */
function standing(fills: readonly RecordedFill[], busts: readonly RecordedBust[]): RecordedFill[] {
  if (busts.length === 0) return [...fills];
  const busted = new Map<string, number>();
  for (const bust of busts) {
    const key = `${bust.agentId}\u0000${bust.venueFillId}`;
    busted.set(key, (busted.get(key) ?? 0) + bust.lots);
  }
  const left: RecordedFill[] = [];
  for (const fill of fills) {
    const taken = busted.get(`${fill.agentId}\u0000${fill.venueFillId}`) ?? 0;
    const lots = fill.lots - taken;
    if (taken <= LOT_EPSILON) left.push(fill);
    else if (lots > LOT_EPSILON) {
      const share = lots / fill.lots;
      const profit = fill.profit === undefined || fill.profit === null ? fill.profit : fill.profit * share;
      left.push({ ...fill, lots: round(lots), fee: fill.fee * share, ...(profit !== undefined && { profit }) });
    }
  }
  return left;
}

function closedPart(lot: OpenLot, close: RecordedFill, lots: number): LedgerTrade {
  const share = lots / lot.lots;
  const fees = lot.fee * share + close.fee * (lots / close.lots);
  const funding = lot.funding * share;
  lot.fee -= lot.fee * share;
  lot.funding -= funding;
  lot.lots -= lots;
  const direction = lot.side === 'long' ? 1 : -1;
  const gross =
    close.profit !== undefined && close.profit !== null
      ? close.profit * (lots / close.lots)
      : (close.price - lot.fill.price) * lots * direction;
  return {
    ...tradeOf(lot, lots),
    id: `${lot.fill.agentId}:${lot.fill.venueFillId}:${close.venueFillId}`,
    exitAt: close.at,
    exitPrice: close.price,
    fees: round(fees),
    funding: round(funding),
    realizedProfit: round(gross - fees + funding),
    closingSignalIds: close.signalId === null ? [] : [close.signalId],
  };
}

function openTrade(lot: OpenLot): LedgerTrade {
  return { ...tradeOf(lot, lot.lots), fees: round(lot.fee), funding: round(lot.funding) };
}

function tradeOf(lot: OpenLot, lots: number): LedgerTrade {
  const fill = lot.fill;
  return {
    id: `${fill.agentId}:${fill.venueFillId}`,
    agentId: fill.agentId,
    accountId: fill.accountId,
    sourceId: fill.sourceId,
    strategy: fill.strategy,
    symbol: fill.symbol,
    side: lot.side,
    lots: round(lots),
    entryAt: fill.at,
    entryPrice: fill.price,
    exitAt: null,
    exitPrice: null,
    fees: 0,
    funding: 0,
    realizedProfit: null,
    openingSignalId: fill.signalId,
    closingSignalIds: [],
    quoteAtReceipt: fill.quote ?? null,
    receivedAt: fill.receivedAt,
    firstFillAt: fill.at,
  };
}

/** A funding payment, over the lots open when it was booked, in proportion to their lots. */
function shareFunding(lots: OpenLot[], amount: number): void {
  const total = lots.reduce((sum, lot) => sum + lot.lots, 0);
  if (total <= LOT_EPSILON) return;
  for (const lot of lots) lot.funding += amount * (lot.lots / total);
}

function removeClosed(lots: OpenLot[]): void {
  for (let i = lots.length - 1; i >= 0; i--) if (lots[i]!.lots <= LOT_EPSILON) lots.splice(i, 1);
}

/** Money and lots to 8 decimals: sums of shares leave binary fractions (0.30000000000000004). */
function round(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}
