import type { Logger } from 'pino';
import {
  brokerSymbol,
  canonicalSymbol,
  ENGINE_FILLS,
  resolveInstrument,
  resolveSignalSymbol,
  summarize,
  type EngineState,
  type InstrumentSpec,
  type Quote,
  type Tick,
} from '../../../engine/index.js';
import { assumedOrder } from '../../assumed-order.js';
import type { SimulatedBook, SimulatedVenue } from '../../simulated-venue.js';
import {
  VenueRefusedError,
  type OrderRequest,
  type Protection,
  type VenueAccount,
  type VenueHoldings,
  type VenueOrder,
  type VenueOrderRef,
  type VenuePosition,
  type VenueReport,
} from '../../venue.js';
import { PAPER_JOURNAL, type PaperBook } from './paper-journal.js';
import type { PriceFeed } from './price-feed.js';
import { resumePaperAccount, type PaperAccountSettings } from './resume-account.js';

/**
 * The paper account as a venue. The account is the engine's own simulation (the agent's book
 * is the account): orders fill at the simulated quotes, exactly where the engine priced them,
 * and the engine holds the stops and targets and fills them on the feed's ticks. So this venue
 * confirms what the simulation did; it has nothing to reconcile and reports nothing of its own.
 * The account and its feed position live in `paper-account.json` (see paper-journal.ts).
 */
export class PaperVenue implements SimulatedVenue<PaperBook> {
  readonly name = 'paper';
  readonly netsPositions = false;
  readonly simulated = true;
  readonly accountName = 'paper account';
  readonly journal = { name: 'paper-account.json', format: PAPER_JOURNAL };
  private state: () => EngineState = () => {
    throw new Error('the paper account is not restored yet');
  };
  private feed: PriceFeed | null = null;
  /** The simulation is the market. */
  readonly fills = ENGINE_FILLS;

  constructor(
    private readonly settings: PaperAccountSettings,
    private readonly log: Logger,
  ) {}

  restore(stored: PaperBook | null, file: string, book: () => EngineState): SimulatedBook {
    const resumed = resumePaperAccount(stored, file, this.settings, this.log);
    this.feed = resumed.feed;
    this.state = book;
    // Said at start, not only at the first refused signal: a sender is answered 202 before the
    // agent sees the signal, so the refusal would otherwise show only in this log and the signal log.
    const map = resumed.state.config.symbolMap;
    const symbols = [...new Set(resumed.feed.symbols.map((s) => canonicalSymbol(map, s)))].sort();
    this.log.info(
      { feed: resumed.feed.description, symbols },
      'the paper feed prices only these symbols; a signal on any other is rejected (give --ticks a file with its prices, or map it in --instruments)',
    );
    return { state: resumed.state, agentId: stored?.agentId ?? null, executed: stored?.executed ?? [] };
  }

  record(book: SimulatedBook): Omit<PaperBook, 'version' | 'savedAt'> {
    return {
      agentId: book.agentId,
      engine: book.state,
      executed: book.executed,
      feed: this.feed?.position() ?? null,
      instrumentsFile: this.settings.instrumentsFile,
    };
  }

  unpriced(symbol: string): string | null {
    const feed = this.feed;
    if (feed === null) return null;
    const map = this.state().config.symbolMap;
    const wanted = resolveSignalSymbol(map, symbol);
    // A symbol that does not resolve is the engine's to reject, with its reason.
    if (!wanted.ok) return null;
    // Compared as venue symbols: two tickers may name the one the feed quotes.
    const venue = (name: string) => brokerSymbol(map, canonicalSymbol(map, name)).toUpperCase();
    if (feed.symbols.some((quoted) => venue(quoted) === venue(wanted.canonical))) return null;
    // Not "no price yet": the feed will never price it, so say what it does price.
    const quoted = [...new Set(feed.symbols.map((s) => canonicalSymbol(map, s)))].sort();
    return `${wanted.canonical} is not in the paper feed: ${feed.description} prices only ${quoted.join(', ')}; send one of those, or give --ticks a file with prices for it`;
  }

  start(onTick: (tick: Tick) => void): void {
    this.feed?.start(onTick);
  }

  published(now: number): Record<string, unknown> {
    const { type: _type, time, ...account } = summarize(this.state(), now);
    return { ...account, updatedAt: new Date(time).toISOString(), paper: true };
  }

  async open(): Promise<VenueHoldings> {
    return { positions: [], orders: [] };
  }

  async account(): Promise<VenueAccount> {
    const summary = summarize(this.state(), Date.now());
    return { balance: summary.balance, equity: summary.equity, currency: summary.currency, positions: [], orders: [] };
  }

  funds(): Promise<VenueAccount> {
    return this.account();
  }

  instrument(symbol: string): InstrumentSpec | null {
    const { config } = this.state();
    return resolveInstrument(canonicalSymbol(config.symbolMap, symbol), config.instruments);
  }

  async quote(symbol: string): Promise<Quote> {
    const quote = this.state().quotes[symbol];
    if (quote === undefined) throw new VenueRefusedError(`there is no price for ${symbol} yet`);
    return quote;
  }

  async place(order: OrderRequest): Promise<VenueOrder> {
    if (order.kind !== 'market') return paperOrder(order.clientId, order, null);
    const quote = await this.quote(order.symbol);
    return paperOrder(order.clientId, order, order.side === 'buy' ? quote.ask : quote.bid);
  }

  /** The account is the book: no order stands anywhere a look-up could find. */
  async find(_order: OrderRequest): Promise<VenueOrder | null> {
    return null;
  }

  async protect(_position: VenuePosition, _protection: Protection): Promise<VenueOrder[]> {
    // The simulation holds them (the engine closes at the stop and the targets on ticks).
    return [];
  }

  async close(position: VenuePosition, volume: number, clientId: string): Promise<VenueOrder> {
    const quote = await this.quote(position.symbol);
    const side = position.side === 'buy' ? 'sell' : 'buy';
    return paperOrder(
      clientId,
      { symbol: position.symbol, side, kind: 'market', volume, price: null },
      side === 'buy' ? quote.ask : quote.bid,
    );
  }

  async cancel(_order: VenueOrderRef): Promise<void> {}

  async reports(): Promise<VenueReport[]> {
    return [];
  }

  async shutdown(): Promise<void> {
    this.feed?.stop();
  }
}

/** Orders fill at the simulated quote, and that fill is the account's own. */
function paperOrder(
  clientId: string,
  order: Pick<OrderRequest, 'symbol' | 'side' | 'kind' | 'volume' | 'price'>,
  fill: number | null,
): VenueOrder {
  return assumedOrder(`paper-${clientId}`, clientId, order, fill, true);
}
