import { ENGINE_FILLS, type InstrumentSpec, type Quote } from '../engine/index.js';
import type { AgentLog } from './agent-log.js';
import { assumedOrder } from './assumed-order.js';
import type {
  OrderRequest,
  Protection,
  Venue,
  VenueAccount,
  VenueFunds,
  VenueHoldings,
  VenueOrder,
  VenueOrderRef,
  VenuePosition,
  VenueReport,
} from './venue.js';

/**
 * `--dry-run`: reads the real venue (account, instruments, quotes) and logs every order it
 * would send instead of sending it. Market orders count as filled at the current quote, so the
 * engine's decisions that follow (stops, targets) are what a real run would do.
 */
export class DryRunVenue implements Venue {
  readonly name: string;
  readonly netsPositions: boolean;
  readonly oneExitOrder: boolean;
  /** Nothing is placed, so the venue fills nothing: entries and exits fill at the quotes, as on paper. */
  readonly fills = ENGINE_FILLS;

  constructor(
    private readonly real: Venue,
    private readonly log: AgentLog,
  ) {
    this.name = `${real.name} (dry run)`;
    this.netsPositions = real.netsPositions;
    this.oneExitOrder = real.oneExitOrder === true;
  }

  open(): Promise<VenueHoldings> {
    return this.real.open();
  }

  account(): Promise<VenueAccount> {
    return this.real.account();
  }

  funds(symbol?: string, reread?: string[]): Promise<VenueFunds> {
    return this.real.funds(symbol, reread);
  }

  instrument(symbol: string): InstrumentSpec | null {
    return this.real.instrument(symbol);
  }

  findSymbol(signalSymbol: string): string | null {
    return this.real.findSymbol?.(signalSymbol) ?? null;
  }

  quote(symbol: string, reread?: string[]): Promise<Quote> {
    return this.real.quote(symbol, reread);
  }

  async place(order: OrderRequest): Promise<VenueOrder> {
    this.log.info({ dryRun: true, order }, 'dry run: would place an order');
    if (order.kind !== 'market') return simulated(order.clientId, order, null);
    const quote = await this.real.quote(order.symbol);
    return simulated(order.clientId, order, order.side === 'buy' ? quote.ask : quote.bid);
  }

  /** A dry run sends nothing: no order of its making stands at the venue. */
  async find(_order: OrderRequest): Promise<VenueOrder | null> {
    return null;
  }

  async protect(position: VenuePosition, protection: Protection): Promise<VenueOrder[]> {
    this.log.info(
      { dryRun: true, position: position.id, stop: protection.stop, targets: protection.targets },
      'dry run: would place the stop and targets',
    );
    const side = position.side === 'buy' ? 'sell' : 'buy';
    const orders: VenueOrder[] = [];
    if (protection.stop !== null) {
      orders.push({
        ...simulated(
          `${protection.clientId}s`,
          { symbol: position.symbol, side, kind: 'market', volume: position.volume, price: protection.stop },
          null,
        ),
        kind: 'stop_loss',
      });
    }
    protection.targets.forEach((target, i) => {
      orders.push({
        ...simulated(
          `${protection.clientId}t${i + 1}`,
          { symbol: position.symbol, side, kind: 'limit', volume: target.volume, price: target.price },
          null,
        ),
        kind: 'take_profit',
      });
    });
    return orders;
  }

  async close(position: VenuePosition, volume: number, clientId: string): Promise<VenueOrder> {
    this.log.info({ dryRun: true, position: position.id, volume }, 'dry run: would close');
    const quote = await this.real.quote(position.symbol);
    const side = position.side === 'buy' ? 'sell' : 'buy';
    return simulated(
      clientId,
      { symbol: position.symbol, side, kind: 'market', volume, price: null },
      side === 'buy' ? quote.ask : quote.bid,
    );
  }

  async cancel(order: VenueOrderRef): Promise<void> {
    this.log.info({ dryRun: true, order }, 'dry run: would cancel');
  }

  async reports(): Promise<VenueReport[]> {
    return [];
  }

  shutdown(): Promise<void> {
    return this.real.shutdown();
  }
}

/** Nothing was filled anywhere: a market order counts as filled at the quote, with no fills listed. */
function simulated(
  clientId: string,
  order: Pick<OrderRequest, 'symbol' | 'side' | 'kind' | 'volume' | 'price'>,
  fill: number | null,
): VenueOrder {
  return assumedOrder(`dry-run-${clientId}`, clientId, order, fill, false);
}
