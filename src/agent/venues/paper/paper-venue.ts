import { ENGINE_FILLS, canonicalSymbol, resolveInstrument, summarize, type EngineState, type InstrumentSpec, type Quote } from '../../../engine/index.js';
import { VenueRefusedError, type OrderRequest, type Protection, type Venue, type VenueAccount, type VenueHoldings, type VenueOrder, type VenueOrderRef, type VenuePosition, type VenueReport } from '../../venue.js';

/**
 * The paper account as a venue. The account is the engine's own simulation (the agent's book
 * is the account): orders fill at the simulated quotes, exactly where the engine priced them,
 * and the engine holds the stops and targets and fills them on the feed's ticks. So this venue
 * confirms what the simulation did; it has nothing to reconcile and reports nothing of its own.
 */
export class PaperVenue implements Venue {
  readonly name = 'paper';
  readonly netsPositions = false;
  /** The simulation is the market. */
  readonly fills = ENGINE_FILLS;

  constructor(private readonly simulated: () => EngineState) {}

  async open(): Promise<VenueHoldings> {
    return { positions: [], orders: [] };
  }

  async account(): Promise<VenueAccount> {
    const summary = summarize(this.simulated(), Date.now());
    return { balance: summary.balance, equity: summary.equity, currency: summary.currency, positions: [], orders: [] };
  }

  funds(): Promise<VenueAccount> {
    return this.account();
  }

  instrument(symbol: string): InstrumentSpec | null {
    const { config } = this.simulated();
    return resolveInstrument(canonicalSymbol(config.symbolMap, symbol), config.instruments);
  }

  async quote(symbol: string): Promise<Quote> {
    const quote = this.simulated().quotes[symbol];
    if (quote === undefined) throw new VenueRefusedError(`there is no price for ${symbol} yet`);
    return quote;
  }

  async place(order: OrderRequest): Promise<VenueOrder> {
    if (order.kind !== 'market') return this.order(order.clientId, order, 'open', null);
    const quote = await this.quote(order.symbol);
    return this.order(order.clientId, order, 'filled', order.side === 'buy' ? quote.ask : quote.bid);
  }

  async protect(_position: VenuePosition, _protection: Protection): Promise<VenueOrder[]> {
    // The simulation holds them (the engine closes at the stop and the targets on ticks).
    return [];
  }

  async close(position: VenuePosition, volume: number, clientId: string): Promise<VenueOrder> {
    const quote = await this.quote(position.symbol);
    const side = position.side === 'buy' ? 'sell' : 'buy';
    return this.order(clientId, { symbol: position.symbol, side, kind: 'market', volume, price: null }, 'filled', side === 'buy' ? quote.ask : quote.bid);
  }

  async cancel(_order: VenueOrderRef): Promise<void> {}

  async reports(): Promise<VenueReport[]> {
    return [];
  }

  async shutdown(): Promise<void> {}

  private order(clientId: string, order: Pick<OrderRequest, 'symbol' | 'side' | 'kind' | 'volume' | 'price'>, status: VenueOrder['status'], fill: number | null): VenueOrder {
    return {
      id: `paper-${clientId}`,
      clientId,
      symbol: order.symbol,
      side: order.side,
      kind: order.kind,
      volume: order.volume,
      price: order.price,
      status,
      filled: fill === null ? 0 : order.volume,
      average: fill,
      fills: fill === null ? [] : [{ price: fill, volume: order.volume, time: null, fee: null }],
    };
  }
}
