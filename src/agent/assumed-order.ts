import type { OrderRequest, VenueOrder } from './venue.js';

/**
 * The order a venue that sends nothing (the paper account, a dry run) answers for a request:
 * filled whole at `fill` (a market order at the quote), or standing open when `fill` is null.
 * `recordFill`: list the fill as the order's one fill (the paper account, where it is the
 * account's own), or leave the fills empty (a dry run, where nothing was filled anywhere).
 */
export function assumedOrder(
  id: string,
  clientId: string,
  order: Pick<OrderRequest, 'symbol' | 'side' | 'kind' | 'volume' | 'price'>,
  fill: number | null,
  recordFill: boolean,
): VenueOrder {
  return {
    id,
    clientId,
    symbol: order.symbol,
    side: order.side,
    kind: order.kind,
    volume: order.volume,
    price: order.price,
    status: fill === null ? 'open' : 'filled',
    filled: fill === null ? 0 : order.volume,
    average: fill,
    fills: fill === null || !recordFill ? [] : [{ price: fill, volume: order.volume, time: null, fee: null }],
  };
}
