import type { Quote } from '../../../engine/index.js';
import type { VenueFunds, VenuePosition } from '../../venue.js';

/** A held quote is used for a decision while younger than this; older, it is read first. */
export const QUOTE_FRESH_MS = 1000;
/** How often the top of book of each watched symbol is read in the background (within QUOTE_FRESH_MS twice). */
export const QUOTE_REFRESH_MS = 400;
/**
 * Held balance and equity are used while younger than this. The reconciliation reads the whole
 * account every 5 s (RECONCILE_EVERY_MS) and refreshes them; this bound leaves one late pass.
 */
export const FUNDS_FRESH_MS = 12_000;
/** Held funds older than this are read in the background when the reconciliation has not (it runs slower). */
export const FUNDS_REFRESH_MS = 7_000;
/** A symbol is kept quoted for this long after a signal or a management pass last asked for it. */
export const WATCH_MS = 15 * 60_000;
/**
 * Where one read quotes every symbol at once (Binance USDⓈ-M's book ticker), a symbol is kept
 * quoted for a week at no further cost: a basket traded at each candle close finds its quotes held.
 */
export const WATCH_ONE_READ_MS = 7 * 86_400_000;

export interface Held<T> {
  value: T;
  /** When the exchange answered it (ms). */
  at: number;
}

/**
 * What a CCXT account's decisions need, kept before a signal arrives: the top of book of each
 * symbol traded lately, the balance and equity per settlement currency, and the positions, each
 * with the time it was read. The venue reads and writes it; this holds and ages it.
 */
export class CcxtHeldState {
  private readonly quotes = new Map<string, Held<Quote>>();
  /** Symbol → when a decision or a management pass last asked for its quote. */
  private readonly watched = new Map<string, number>();
  private readonly funds = new Map<string, Held<VenueFunds>>();
  private positions: Held<VenuePosition[]> | null = null;

  quote(symbol: string): Held<Quote> | null {
    return this.quotes.get(symbol) ?? null;
  }

  setQuote(symbol: string, quote: Quote, at: number): void {
    const held = this.quotes.get(symbol);
    // A slower answer to an older request never replaces a newer one.
    if (held === undefined || held.at <= at) this.quotes.set(symbol, { value: quote, at });
  }

  watch(symbol: string, now: number): void {
    this.watched.set(symbol, now);
  }

  /** The symbols to keep quoted: asked for within `watchMs`, and those with a position. */
  watchedSymbols(now: number, watchMs = WATCH_MS): string[] {
    for (const [symbol, asked] of this.watched) if (now - asked > watchMs) this.watched.delete(symbol);
    return [...new Set([...this.watched.keys(), ...(this.positions?.value ?? []).map((p) => p.symbol)])];
  }

  fundsOf(currency: string): Held<VenueFunds> | null {
    return this.funds.get(currency) ?? null;
  }

  setFunds(funds: VenueFunds, at: number): void {
    const held = this.funds.get(funds.currency);
    if (held === undefined || held.at <= at) this.funds.set(funds.currency, { value: funds, at });
  }

  /** Our own order changed the account: the held funds no longer say what it holds. */
  forgetFunds(): void {
    this.funds.clear();
  }

  heldPositions(): Held<VenuePosition[]> | null {
    return this.positions;
  }

  setPositions(positions: VenuePosition[], at: number): void {
    if (this.positions === null || this.positions.at <= at) this.positions = { value: positions, at };
  }

  /**
   * Our own fill, applied at once so the next decision sees it. `reduces`: a close, of the
   * position of the other side; `nets` (one-way mode): reduces the other side's position and
   * opens past zero; `adds` (hedge mode): each side is its own position.
   */
  applyFill(
    fill: { symbol: string; side: 'buy' | 'sell'; volume: number; price: number },
    how: 'reduces' | 'nets' | 'adds',
    at: number,
  ): void {
    if (this.positions === null || !(fill.volume > 0)) return;
    const list = this.positions.value.map((p) => ({ ...p }));
    const same = list.find((p) => p.symbol === fill.symbol && p.side === fill.side);
    const other = how !== 'adds' ? list.find((p) => p.symbol === fill.symbol && p.side !== fill.side) : undefined;
    let lots = fill.volume;
    if (other !== undefined) {
      const reduced = Math.min(other.volume, lots);
      other.volume -= reduced;
      lots -= reduced;
    }
    if (lots > 0 && how !== 'reduces') {
      if (same !== undefined) {
        same.price = (same.price * same.volume + fill.price * lots) / (same.volume + lots);
        same.volume += lots;
      } else {
        const side = fill.side;
        list.push({
          id: `${fill.symbol}:${side}`,
          symbol: fill.symbol,
          side,
          volume: lots,
          price: fill.price,
          protection: [],
        });
      }
    }
    this.positions = { value: list.filter((p) => p.volume > 1e-12), at };
  }
}

/** Why held data was read again before a decision, for the signal's outcome. */
export function staleNote(what: string, held: Held<unknown> | null, bound: number, now: number): string {
  if (held === null) return `no ${what} was held: read before deciding`;
  return `the held ${what} was ${formatAge(now - held.at)} old (bound ${formatAge(bound)}): read again before deciding`;
}

function formatAge(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}
