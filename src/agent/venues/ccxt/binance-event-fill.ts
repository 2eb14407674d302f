import type { Order } from 'ccxt';
import type { VenueFill } from '../../venue.js';

/**
 * The fill a Binance order event tells (`ORDER_TRADE_UPDATE` on USDⓈ-M, `executionReport` on
 * spot, as CCXT hands it on in the order's `info`): execution type `TRADE`, with the lots (`l`),
 * price (`L`), time (`T`) and commission (`n`, in `N`) of that one fill. Null for any other event.
 * CCXT lists an order's fills only when it saw the order's earlier events, so the agent reads
 * them from each event itself.
 */
export function fillOfBinanceEvent(order: Order): VenueFill | null {
  const info = order.info as Record<string, unknown> | undefined;
  if (info?.x !== 'TRADE') return null;
  const price = Number(info.L);
  const volume = Number(info.l);
  if (!(price > 0) || !(volume > 0)) return null;
  const cost = Number(info.n);
  const time = Number(info.T);
  return {
    price,
    volume,
    time: time > 0 ? new Date(time).toISOString() : null,
    fee: typeof info.N === 'string' && Number.isFinite(cost) ? { cost, currency: info.N } : null,
  };
}
